package script

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/sobek"
)

// TestK6Globals: __ENV, __VU, __ITER, open and require behave as k6's
// globals: found by name and on globalThis, the same function on every
// read, open in the init context only, and each assignable by name from a
// module (strict code), which sobek allows only for the global object's
// own properties; the web APIs on the lazy prototype are found by name.
func TestK6Globals(t *testing.T) {
	path := writeScript(t, "g.js", "export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };\n"+
		"globalThis.early = typeof open + typeof require + __ITER;\n"+
		"globalThis.assign = function () { __ENV = 1; __VU = 2; __ITER = 3; open = 4; require = 5; return [__ENV, __VU, __ITER, open, require].join(); };\n"+
		"export default function () {}\n")
	// The module's code hands its values over on the global object: a
	// scenario's VU reads one export alone, its exec function.
	vu := firstVU(t, path, Config{Env: map[string]string{"A": "1"}})
	if got := vu.rt.GlobalObject().Get("early").String(); got != "functionfunction0" {
		t.Errorf("in the init context: %s", got)
	}
	for _, c := range []struct{ js, want string }{
		{`typeof __VU + __VU + (globalThis.__VU === __VU)`, "number1true"},
		{`__ENV.A + ('__ENV' in globalThis) + (__ENV === globalThis.__ENV)`, "1truetrue"},
		{`(open === open) + typeof open + (require === globalThis.require)`, "truefunctiontrue"},
		{`require('k6/http') === require('k6/http')`, "true"},
		{`let threw = ''; try { open('missing.txt'); } catch (e) { threw = String(e); } threw.includes('init context')`, "true"},
		{`typeof setTimeout + typeof TextDecoder + (console === globalThis.console)`, "functionfunctiontrue"},
	} {
		v, err := vu.rt.RunString(c.js)
		if err != nil {
			t.Fatalf("%s: %v", c.js, err)
		}
		if got := v.String(); got != c.want {
			t.Errorf("%s = %s, want %s", c.js, got, c.want)
		}
	}
	assign, _ := sobek.AssertFunction(vu.rt.GlobalObject().Get("assign"))
	v, err := assign(sobek.Undefined())
	if err != nil {
		t.Fatalf("assigning k6's globals by name: %v", err)
	}
	if got := v.String(); got != "1,2,3,4,5" {
		t.Errorf("after assigning k6's globals: %s", got)
	}
}

// TestIterIsSetEachIteration: __ITER is the VU's iteration, and an
// assignment by the script lasts until the next iteration sets it again,
// as in k6.
func TestIterIsSetEachIteration(t *testing.T) {
	got := consoleOf(t, "main.js", `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };
export default function () {
  const before = __ITER;
  __ITER = 100;
  console.log(before, __ITER, globalThis.__ITER);
}
`)
	if want := "0 100 100,1 100 100,2 100 100"; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}

// TestIterIsAPlainProperty: __ITER, which the VU holds in a cell of its
// own (holdIter), is to JavaScript the plain data property k6 makes it,
// every iteration: writable, enumerable and configurable, deletable (the
// next iteration sets it again).
func TestIterIsAPlainProperty(t *testing.T) {
	got := consoleOf(t, "main.js", `
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };
export default function () {
  console.log(JSON.stringify(Object.getOwnPropertyDescriptor(globalThis, '__ITER')));
  if (__ITER === 1) console.log(delete globalThis.__ITER, typeof globalThis.__ITER);
}
`)
	d := func(n int) string {
		return fmt.Sprintf(`{"value":%d,"writable":true,"enumerable":true,"configurable":true}`, n)
	}
	if want := d(0) + "," + d(1) + ",true undefined," + d(2); got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}

// TestExecThroughReExports: a scenario's VU reads its exec function
// without a namespace object (vu.export): exports re-exported from other
// modules (by name, by `export *`, as the default) and a local one under
// another name are found as the setup VU's namespace finds them, each
// module's state its VU's own.
func TestExecThroughReExports(t *testing.T) {
	path := writeScript(t, "main.js", `
export { named } from './lib.js';
export * from './star.js';
export { default } from './dflt.js';
function local() { console.log('aliased'); }
export { local as aliased };
export const options = { scenarios: {
  d: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'aliased' },
  a: { executor: 'per-vu-iterations', vus: 1, iterations: 2, exec: 'named' },
  b: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'starred' },
  c: { executor: 'per-vu-iterations', vus: 1, iterations: 1 },
} };
`, "lib.js", "let n = 0;\nexport function named() { n++; console.log('named', n); }\n",
		"star.js", "export function starred() { console.log('starred'); }\n",
		"dflt.js", "export default function () { console.log('default'); }\n")
	_, base := startTarget(t, robust())
	var out consoleLines
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	got := out.all()
	sort.Strings(got)
	if want := "aliased,default,named 1,named 2,starred"; strings.Join(got, ",") != want {
		t.Fatalf("console %q, want %q", got, want)
	}
	vu := firstVU(t, path, Config{})
	if vu.exports != nil {
		t.Fatal("a scenario's VU made the namespace object of the script's exports")
	}
	if v := vu.export("nothing"); v != nil {
		t.Fatalf("export of a name not exported: %v", v)
	}
}

// TestK6AndExecutionMembers: "k6" and "k6/execution", their members made
// on first read from tables every VU shares, are each VU's own objects
// and behave as k6's: keys, identity, group's value, a seeded Math.random,
// fail's message, exec.test's functions, assignment kept per VU.
func TestK6AndExecutionMembers(t *testing.T) {
	got := consoleOf(t, "main.js", `
import k6, { sleep, group, check, fail, randomSeed } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };
export default function () {
  const out = [Object.keys(k6).join(' '), sleep === k6.sleep, check === k6.check, group('g', () => 5)];
  randomSeed(7); const a = Math.random(); randomSeed(7);
  out.push(a === Math.random());
  try { fail('boom'); } catch (e) { out.push(String(e.message).includes('boom')); }
  out.push(Object.keys(exec).join(' '), typeof exec.test.abort, typeof exec.test.fail, exec.instance.iterationsInterrupted);
  const seen = k6.mine;
  k6.mine = exec.vu.idInInstance;
  out.push(seen === undefined, exec.vu === exec.vu);
  console.log(out.join());
}
`)
	want := "check fail group randomSeed sleep,true,true,5,true,true,instance scenario test vu,function,function,0,true,true"
	if got != want+","+want {
		t.Fatalf("console %q, want %q twice", got, want)
	}
}

// firstVU loads the script at path and makes a VU of its first scenario,
// closed when the test ends.
func firstVU(t *testing.T, path string, cfg Config) *VU {
	t.Helper()
	r, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	vu, err := r.newVU(r.Phases()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vu.close)
	return vu
}
