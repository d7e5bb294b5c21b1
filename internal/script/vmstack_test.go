package script

import (
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/grafana/sobek"
)

// The pinned sobek keeps its VM's stack where vmstack.go reaches it: a
// sobek whose layout moved fails here, not silently in the benchmarks.
func TestVMStackReach(t *testing.T) {
	if !vmStack.ok {
		t.Fatal("sobek's Runtime.vm.stack not found: VUs no longer keep their value stack (vmstack.go)")
	}
	rt := sobek.New()
	p := vmStack.of(rt)
	if p == nil {
		t.Fatal("no VM stack reached on a new runtime")
	}
	// what the reach reads is the stack sobek runs on: a value lent is
	// the one a call uses and drops
	lent := make([]sobek.Value, 0, 64)
	*p = lent
	if _, err := rt.RunString(`(function f(n) { return n ? f(n - 1) + 1 : 0 })(10)`); err != nil {
		t.Fatal(err)
	}
	if *p != nil {
		t.Fatalf("after a top-level call the VM's stack is %d values, want none (sobek drops it)", len(*p))
	}
	if lent[:cap(lent)][0] == nil {
		t.Fatal("the lent stack was not the one the call ran on")
	}
}

// A VU's iterations run on the stack its earlier ones grew, cleared
// between them, and behave as on a new stack: the checks' results, a
// thrown error caught, a derived class's constructor that does not call
// super (sobek reads a residual slot above its top there).
func TestVUKeepsItsStack(t *testing.T) {
	path := writeScript(t, "s.js", `
import { check } from 'k6';
export const options = { vus: 1, iterations: 100 };
class A {}
class NoSuper extends A { constructor() { return undefined; } }
class WithSuper extends A { constructor() { super(); } }
function deep(n) { return n === 0 ? [__ITER] : deep(n - 1); }
export default function () {
  new WithSuper();
  let refused = false;
  try { new NoSuper(); } catch (e) { refused = e instanceof ReferenceError; }
  check(deep(20), {
    'deep': (r) => r[0] === __ITER,
    'refused': () => refused,
  });
}
`)
	r, err := Load(path, Config{Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	vu, err := r.newVU(r.Phases()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer vu.close()
	// no GC between iterations here: one would take the kept stack (below)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var kept unsafe.Pointer
	for i := range 6 {
		vu.iteration()
		h := vu.stack.Value()
		if h == nil || h.s == nil {
			t.Fatalf("iteration %d: no stack kept", i)
		}
		if vu.held != nil {
			t.Fatalf("iteration %d: the stack is held strongly between iterations", i)
		}
		for j, v := range h.s {
			if v != nil {
				t.Fatalf("iteration %d: kept stack slot %d holds %v after the iteration", i, j, v)
			}
		}
		if p := vmStack.of(vu.rt); *p != nil {
			t.Fatalf("iteration %d: the VM still holds a stack between iterations", i)
		}
		if i >= 2 { // grown in the first, the same array since
			if d := unsafe.Pointer(unsafe.SliceData(h.s)); kept != nil && d != kept {
				t.Fatalf("iteration %d: the stack was grown again (%d values)", i, cap(h.s))
			} else {
				kept = d
			}
		}
	}
	// an idle VU's stack is the GC's: held weakly between iterations
	runtime.GC()
	if h := vu.stack.Value(); h != nil {
		t.Fatalf("a GC between iterations left the VU its stack of %d values", cap(h.s))
	}
	vu.iteration() // and the next iteration grows one again
	if h := vu.stack.Value(); h == nil || h.s == nil {
		t.Fatal("no stack kept after the GC's iteration")
	}
	cs := r.Phases()[0].Checks()
	if len(cs) != 2 {
		t.Fatalf("%d checks, want 2: %+v", len(cs), cs)
	}
	for _, c := range cs {
		if c.Pass != 7 || c.Failed != 0 {
			t.Errorf("check %q: %d passed, %d failed; want 7 and 0", c.Name, c.Pass, c.Failed)
		}
	}
}
