package script

import (
	"reflect"
	"unsafe"
	"weak"

	"github.com/grafana/sobek"
)

// A VU's value stack, kept from one iteration to the next.
//
// sobek drops its VM's value stack (vm.stack = nil) whenever a top-level
// call returns (Runtime.leave), so every iteration grew a new one from
// nothing: 2, 4, 8, ... values, each growth a new array and a copy, some
// 670 bytes and 3 allocations an iteration of bench/vus.sh's script (a
// third of what its iteration allocated besides the script's own objects;
// docs/performance.md, "Bytes per iteration"). The VU now lends sobek the
// array its last iteration grew: before the exec function's call, if the
// VM has no stack, it gets the VU's kept one (length 0); while the
// iteration runs (a request, a check, a sleep) the VU notes the VM's
// stack again, so a stack sobek had to grow is the one kept; when the
// call has returned and sobek let go of it, every slot is cleared, so the
// next iteration starts on a stack that reads as a new one (sobek reads a
// residual slot above its top in one place, and clears the slots above
// its top itself when it reuses a stack within a call).
//
// A VU asleep in sleep() holds its VM's stack anyway (the iteration's
// call is under the sleep), so keeping it adds nothing to a sleeping VU's
// heap; between iterations the VU holds it weakly (keptStack), so an idle
// VU's is the GC's; a stack over maxKeptStack values (a deep recursion)
// is not kept.
//
// sobek has no API for this: the stack is reached through the Runtime's
// unexported fields, found by name and checked by type once (stackReach);
// if they are not there as expected, nothing is lent and sobek grows its
// stacks as before (TestVMStackReach fails then, so the pinned sobek's
// layout is checked by the tests).

// maxKeptStack bounds the values a VU's kept stack holds (16 B each): a
// typical iteration's deepest point is a few dozen.
const maxKeptStack = 256

// stackReach is where a Runtime's VM keeps its value stack: the offset of
// Runtime.vm (a pointer to sobek's vm) and of vm.stack (a []Value).
type stackReach struct {
	vm, stack uintptr
	ok        bool
}

// vmStack is the reach of the sobek this is built with.
var vmStack = findStackReach()

// findStackReach finds Runtime.vm and vm.stack, and says ok only if their
// types are the ones this file reads: a pointer to a struct and a slice
// of sobek.Value.
func findStackReach() stackReach {
	f, ok := reflect.TypeFor[sobek.Runtime]().FieldByName("vm")
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
		return stackReach{}
	}
	s, ok := f.Type.Elem().FieldByName("stack")
	if !ok || s.Type.Kind() != reflect.Slice || s.Type.Elem() != reflect.TypeFor[sobek.Value]() {
		return stackReach{}
	}
	return stackReach{vm: f.Offset, stack: s.Offset, ok: true}
}

// of is rt's VM's stack, nil if the reach was not found.
func (r stackReach) of(rt *sobek.Runtime) *[]sobek.Value {
	if !r.ok {
		return nil
	}
	vm := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(rt), r.vm))
	if vm == nil {
		return nil
	}
	return (*[]sobek.Value)(unsafe.Add(vm, r.stack))
}

// keptStack is a VU's kept stack. The VU holds it strongly only while an
// iteration runs (VU.held) and weakly between iterations (VU.stack): a
// VU that stays idle (an arrival-rate executor's VU waiting for work)
// keeps nothing past the next GC, as before, while a VU that iterates
// back to back finds its stack again.
type keptStack struct{ s []sobek.Value }

// lendStack gives the VM the VU's kept stack before an iteration's call,
// if the VM has none, and holds it for the iteration.
func (vu *VU) lendStack() {
	h := vu.stack.Value()
	if h == nil { // the first iteration, or a GC found the VU idle
		h = &keptStack{}
		vu.stack = weak.Make(h)
	}
	vu.held = h
	if p := vmStack.of(vu.rt); p != nil && *p == nil && h.s != nil {
		*p = h.s[:0]
	}
}

// noteStack keeps the VM's stack if sobek grew a larger one than the VU
// keeps (called within the iteration: a request, a check, a sleep).
// Outside an iteration (the setup VU) it keeps nothing.
func (vu *VU) noteStack() {
	h := vu.held
	if h == nil {
		return
	}
	if p := vmStack.of(vu.rt); p != nil {
		if s := *p; cap(s) > cap(h.s) && cap(s) <= maxKeptStack {
			h.s = s[:cap(s)]
		}
	}
}

// settleStack, after the iteration's call returned, clears the kept
// stack for the next iteration and holds it weakly; a stack sobek still
// holds (a call ended by an interrupt leaves it to the VM) is sobek's,
// not the VU's, from then on.
func (vu *VU) settleStack() {
	h := vu.held
	vu.held = nil
	if h == nil || h.s == nil {
		return
	}
	if p := vmStack.of(vu.rt); p == nil || (cap(*p) > 0 && unsafe.SliceData(*p) == unsafe.SliceData(h.s)) {
		h.s = nil
		return
	}
	clear(h.s)
}
