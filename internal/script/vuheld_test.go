package script

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/testwait"
)

// What a finished call left on the VU's value stack is the GC's once the
// VU goes to sleep (dropStale): an object made for a call that returned
// (as check's object is) is collected while the VU is inside its next
// call (sleep), and the caller's own locals are untouched.
func TestSleepDropsStaleStackValues(t *testing.T) {
	vu := &VU{rt: sobek.New()}
	var collected atomic.Bool
	var inside []string
	_ = vu.rt.Set("held", func(sobek.FunctionCall) sobek.Value {
		p := &struct{ pad [64]byte }{}
		runtime.AddCleanup(p, func(*atomic.Bool) { collected.Store(true) }, &collected)
		return vu.rt.ToValue(p)
	})
	_ = vu.rt.Set("use", func(sobek.FunctionCall) sobek.Value { return sobek.Undefined() })
	_ = vu.rt.Set("asleep", func(call sobek.FunctionCall) sobek.Value {
		vu.dropStale()
		testwait.Until(t, testwait.Deadline, "the dropped object's cleanup", func() bool {
			runtime.GC()
			return collected.Load()
		})
		inside = append(inside, call.Argument(0).String())
		return sobek.Undefined()
	})
	v, err := vu.rt.RunString(`(function () {
  const local = 'kept';
  use({ x: held() });
  asleep(local);
  return local + typeof held;
})()`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String() + "," + inside[0]; got != "keptfunction,kept" {
		t.Fatalf("after the sleep: %s", got)
	}
}

// An interrupt that arrives while dropStale runs its empty program is not
// lost: the script stops at its next instruction with the same value.
func TestDropStaleKeepsAnInterrupt(t *testing.T) {
	vu := &VU{rt: sobek.New()}
	stop := errors.New("ramped down")
	_ = vu.rt.Set("asleep", func(sobek.FunctionCall) sobek.Value {
		vu.rt.Interrupt(stop) // pending as the empty program starts
		vu.dropStale()
		return sobek.Undefined()
	})
	_, err := vu.rt.RunString(`asleep(); globalThis.after = true;`)
	ie, ok := errors.AsType[*sobek.InterruptedError](err)
	if !ok || ie.Value() != stop {
		t.Fatalf("got %v, want the interrupt %v", err, stop)
	}
	if after := vu.rt.GlobalObject().Get("after"); after != nil {
		t.Fatalf("the statement after the sleep ran: after = %v", after)
	}
}

// A scenario's VU of a plain script reads its exec function once, when it
// is made, and keeps no view of the script's exports (the getter function
// each module returned): its exec function still reaches the module's
// live bindings, assigned in an iteration or by another export.
func TestScenarioVUKeepsNoExportView(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "held.js", `
export let n = 0;
export function bump() { n += 10; }
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 1 } } };
export default function () { n++; bump(); console.log(n); }
`)
	_, vu := plainScenarioVU(t, path, Config{Console: out.add})
	if vu.plain != nil {
		t.Fatal("the scenario's VU keeps its plain exports")
	}
	for range 2 {
		if _, err := vu.call(vu.fn, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(out.all(), ","); got != "11,22" {
		t.Fatalf("console: %s, want 11,22", got)
	}
}

// A scenario's VU runs its entry module with the function that gives its
// exec function alone (bundle.PlainModule.ProgramFor): a top-level value
// that neither the exec function nor any other function of the module
// reaches (an options object, a table only init used, another export) is
// not kept for the VU's life. The setup VU, which reads every export,
// keeps it.
func TestScenarioVUKeepsOnlyWhatItsExecReaches(t *testing.T) {
	var made, gone atomic.Int64
	runtimeHook = func(vu *VU) {
		_ = vu.rt.Set("held", func(sobek.FunctionCall) sobek.Value {
			p := &struct{ pad [64]byte }{}
			made.Add(1)
			runtime.AddCleanup(p, func(*atomic.Int64) { gone.Add(1) }, &gone)
			return vu.rt.ToValue(p)
		})
	}
	t.Cleanup(func() { runtimeHook = nil })
	path := writeScript(t, "only.js", `
export const table = { big: held() };
const url = 'u';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 1 } } };
export default function () { return url + typeof table; }
export function other() { return 'other'; }
`)
	r, vu := plainScenarioVU(t, path, Config{})
	// the exec function reads table: kept
	v, err := vu.call(vu.fn, nil)
	if err != nil || v.String() != "uobject" {
		t.Fatalf("exec: %v, %v", v, err)
	}
	path2 := writeScript(t, "only2.js", `
export const table = { big: held() };
const url = 'u';
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 1 } } };
export default function () { return url; }
`)
	before := made.Load()
	r2, vu2 := plainScenarioVU(t, path2, Config{})
	if made.Load() != before+2 { // the setup VU's table, kept by it, and the VU's

		t.Fatalf("the setup VU and the VU made %d tables, want 2", made.Load()-before)
	}
	testwait.Until(t, testwait.Deadline, "the table no function reaches, collected", func() bool {
		runtime.GC()
		return gone.Load() >= 1
	})
	if v, err := vu2.call(vu2.fn, nil); err != nil || v.String() != "u" {
		t.Fatalf("exec: %v, %v", v, err)
	}
	runtime.KeepAlive(vu)
	runtime.KeepAlive(r.setupVU)
	runtime.KeepAlive(r2.setupVU)
}

// plainScenarioVU loads a script that must take the plain path and makes
// its first scenario's VU, closed when the test ends.
func plainScenarioVU(t *testing.T, path string, cfg Config) (*Runner, *VU) {
	t.Helper()
	r, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.bundle.Plain == nil {
		t.Fatalf("not on the plain path: %s", r.bundle.PlainWhy)
	}
	vu, err := r.newVU(r.Phases()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vu.close)
	return r, vu
}
