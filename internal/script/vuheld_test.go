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
	r, err := Load(path, Config{Console: out.add})
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
	defer vu.close()
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
