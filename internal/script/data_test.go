package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSharedArray(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "s.js", `
import { SharedArray } from 'k6/data';
import exec from 'k6/execution';
let built = 0;
const users = new SharedArray('users', function () { built++; return JSON.parse(open('./users.json')); });
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } } };
export default function () {
  const u = users[exec.scenario.iterationInTest % users.length];
  let threw = false;
  try { users[0] = 1; } catch (e) { threw = true; }
  console.log(users.length, typeof u.name, built, threw, users.map((x) => x.id).join(','));
}
`, "users.json", `[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]`)
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	lines := out.all()
	if len(lines) != 6 {
		t.Fatalf("console %q", lines)
	}
	for _, l := range lines {
		// built is 0 in every scenario VU: the function ran once, in the
		// first VU's init context, never in theirs.
		if l != "3 string 0 true 1,2,3" {
			t.Fatalf("line %q", l)
		}
	}
}

// BenchmarkSharedArrayMemory: 100 000 items in a SharedArray read by 200
// VUs, against what one parsed copy costs each VU. Reports MiB for the 200
// sharing VUs in all and MiB per VU holding its own copy.
func BenchmarkSharedArrayMemory(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 100000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":%d,"name":"user-%d","email":"user-%d@example.com"}`, i, i, i)
	}
	sb.WriteString("]")
	if err := os.WriteFile(filepath.Join(dir, "users.json"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	src := func(load string) string {
		p := filepath.Join(dir, "s.js")
		_ = os.WriteFile(p, []byte(`
import { SharedArray } from 'k6/data';
`+load+`
export const options = { vus: 1, duration: '1s' };
export default function () { return users[0].id; }
`), 0o644)
		return p
	}
	perVU := func(path string, vus int) float64 { return vuHeap(b, path, vus) / (1 << 20) }
	for range b.N {
		shared := perVU(src(`const users = new SharedArray('u', () => JSON.parse(open('users.json')));`), 200)
		copies := perVU(src(`const users = JSON.parse(open('users.json'));`), 4) / 4
		b.ReportMetric(shared, "MiB-shared-200VUs")
		b.ReportMetric(copies, "MiB-copy-per-VU")
	}
}
