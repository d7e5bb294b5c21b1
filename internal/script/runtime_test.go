package script

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// consoleLines collects console output.
type consoleLines struct {
	mu    sync.Mutex
	lines []string
}

func (c *consoleLines) add(_ slog.Level, msg string) {
	c.mu.Lock()
	c.lines = append(c.lines, msg)
	c.mu.Unlock()
}

func (c *consoleLines) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func TestNoOptionsRunsOneIteration(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "one.js", `
import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { 'is 200': (r) => r.status === 200 });
  console.log('status', res.status, 'vu', __VU, 'iter', __ITER);
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	ph := r.Phases()
	if len(ph) != 1 {
		t.Fatalf("phases = %d, want 1", len(ph))
	}
	c := ph[0].Counts()
	if c.IterOK != 1 || c.IterFailed != 0 || c.OK != 1 || c.Failed != 0 {
		t.Fatalf("counts = %+v, want one ok iteration of one ok attempt", c)
	}
	if got := out.all(); len(got) != 1 || got[0] != "status 200 vu 1 iter 0" {
		t.Fatalf("console = %q", got)
	}
	ch := ph[0].Checks()
	if len(ch) != 1 || ch[0].Name != "is 200" || ch[0].Pass != 1 || ch[0].Failed != 0 {
		t.Fatalf("checks = %+v", ch)
	}
	if !strings.Contains(strings.Join(r.Modules(), ","), "k6/http") {
		t.Fatalf("modules = %v", r.Modules())
	}
}

func TestSetupDataEnvOpenAndImports(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "main.js", `
import http from 'k6/http';
import exec from 'k6/execution';
import { b64encode, b64decode } from 'k6/encoding';
import { greet } from './lib/greet.js';
const text = open('./data.txt');
const bin = open('data.txt', 'b');
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 4, env: { WHO: 'scenario' } } } };
export function setup() {
  const res = http.get(__ENV.BASE + '/');
  return { status: res.status, list: [1, 2] };
}
export default function (data) {
  data.list.push(3); // each VU's own copy
  console.log('iter', greet(__ENV.WHO), data.status, data.list.length, exec.scenario.name, text.trim(), bin.byteLength,
    b64decode(b64encode('hi'), 'std', 's'), __ENV.FROM_CLI);
}
export function teardown(data) { console.log('teardown', JSON.stringify(data)); }
`, "lib/greet.js", `export function greet(who) { return 'hello ' + who; }`, "data.txt", "payload\n")
	r, _ := runScript(t, path, base, Config{Console: out.add, Env: map[string]string{"FROM_CLI": "cli"}}, 30*time.Second)
	lines := out.all()
	if len(lines) != 5 {
		t.Fatalf("console = %q, want 4 iterations and teardown", lines)
	}
	for _, l := range lines[:4] {
		// A VU's data is its own copy: the second iteration of the same VU
		// sees its own earlier push, never another VU's.
		if !strings.HasPrefix(l, "iter hello scenario 200 ") || !strings.HasSuffix(l, " s payload 8 hi cli") {
			t.Fatalf("iteration line %q", l)
		}
	}
	if lines[4] != `teardown {"status":200,"list":[1,2]}` {
		t.Fatalf("teardown line %q: teardown must get setup's data, unchanged", lines[4])
	}
	if c := r.Phases()[0].Counts(); c.IterOK != 4 || c.OK != 0 {
		// setup's request is not the scenario's: the phase made none.
		t.Fatalf("counts = %+v", c)
	}
}

func TestUnsupportedModuleIsRefusedWithItsLine(t *testing.T) {
	for _, mod := range []string{"k6/browser", "k6/experimental/redis", "k6/x/unknown"} {
		path := writeScript(t, "s.js", "import http from 'k6/http';\n\nimport x from '"+mod+"';\nexport default function () { x(); }\n")
		_, err := Load(path, Config{})
		if err == nil {
			t.Fatalf("%s: loaded", mod)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "s.js:3: ") || !strings.Contains(msg, `"`+mod+`"`) || strings.Contains(msg, "\n") {
			t.Fatalf("%s: error %q, want one line naming the module at s.js:3", mod, msg)
		}
	}
	path := writeScript(t, "r.js", "import { x } from 'ftp://127.0.0.1/lib.js';\nexport default function () { x(); }\n")
	if _, err := Load(path, Config{}); err == nil || !strings.HasPrefix(err.Error(), "r.js:1: remote import \"ftp://127.0.0.1/lib.js\"") {
		t.Fatalf("remote import: %v", err)
	}
}

// TestRemoteModuleRuns: a module imported over http from a loopback
// server (with a relative import of its own) runs in every VU; it was
// fetched once, at load.
func TestRemoteModuleRuns(t *testing.T) {
	var mu sync.Mutex
	fetched := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched++
		mu.Unlock()
		switch r.URL.Path {
		case "/k6-utils/1.4.0/index.js":
			fmt.Fprint(w, "import { pick } from './pick.js';\nexport function randomItem(a) { return pick(a); }\n")
		case "/k6-utils/1.4.0/pick.js":
			fmt.Fprint(w, "export function pick(a) { return a[Math.floor(Math.random() * a.length)]; }\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var out consoleLines
	path := writeScript(t, "main.js", "import { randomItem } from '"+srv.URL+"/k6-utils/1.4.0/index.js';\n"+
		"export const options = { vus: 3, iterations: 6 };\nexport default function () { console.log(randomItem(['a'])); }\n")
	runScript(t, path, srv.URL, Config{Console: out.add}, 30*time.Second)
	if got := out.all(); len(got) != 6 || got[0] != "a" {
		t.Fatalf("console = %q, want six a", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if fetched != 2 {
		t.Fatalf("%d fetches, want the module and its import once each", fetched)
	}
}

func TestTypeScript(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "t.ts", `
import http from 'k6/http';
interface Opts { iterations: number }
export const options: Opts = { iterations: 3 };
export default function (): void { http.get(`+"`${__ENV.BASE}/`"+`); }
`)
	r, _ := runScript(t, path, base, Config{}, 30*time.Second)
	if c := r.Phases()[0].Counts(); c.IterOK != 3 || c.OK != 3 {
		t.Fatalf("counts = %+v", c)
	}
}

// TestExceptionNamesTheSourceLine: a throwing iteration is logged with the
// script's own file and line, and fails.
func TestExceptionNamesTheSourceLine(t *testing.T) {
	_, base := startTarget(t, robust())
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	path := writeScript(t, "main.js", "import { helper } from './lib/h.js';\nexport const options = { iterations: 2 };\nexport default function () { helper(); }\n",
		"lib/h.js", "// a helper\nexport function helper() {\n  throw new Error('boom');\n}\n")
	r, _ := runScript(t, path, base, Config{Logger: logger}, 30*time.Second)
	mu.Lock()
	got := logs.String()
	mu.Unlock()
	if !strings.Contains(got, "boom") || !strings.Contains(got, "h.js:3:") {
		t.Fatalf("log %q: want the error at lib/h.js line 3", got)
	}
	if c := r.Phases()[0].Counts(); c.IterFailed != 2 {
		t.Fatalf("counts %+v", c)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestIgnoredOptionsAreNamed: an option throttle does not act on is named
// in a warning, never dropped silently.
func TestIgnoredOptionsAreNamed(t *testing.T) {
	var logs strings.Builder
	path := writeScript(t, "o.js", "export const options = { iterations: 1, userAgnet: 'x', thresholds: {} };\nexport default function () {}\n")
	if _, err := Load(path, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); !strings.Contains(got, "userAgnet") || strings.Contains(got, "iterations") || strings.Contains(got, "thresholds") {
		t.Fatalf("log %q: want the misspelt userAgnet named, iterations and thresholds not", got)
	}
}
