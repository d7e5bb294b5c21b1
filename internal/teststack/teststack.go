// Package teststack measures, in tests, how much goroutine stack a call
// needs: how deep it goes (Depth), and whether it fits a goroutine whose
// stack is 8 KiB, what a GC leaves a sleeping VU (Grows).
//
// A goroutine's stack only moves when the runtime copies it to a larger
// (growth) or smaller (a GC's shrink) one, so with the GC held off a local
// variable of the goroutine's first frame keeps its address unless the
// stack grew. Each measurement runs on a goroutine of its own that first
// grows its stack to the size wanted with one large frame, runs the call
// below a chosen number of padding frames, and checks that address; a
// larger frame afterwards must grow it, proving the stack was that size
// and not larger. Depth finds, by bisection, how many padding frames a
// call can have above it on a 32 KiB stack without growing it. Nothing
// here reads the runtime's internals.
package teststack

import (
	"math"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"
)

// Size is the stack a measured call starts on.
const Size = 8 << 10

// padFrame is pad's frame, in bytes, as measured (80 on amd64).
var padFrame = func() int {
	var a, b uintptr
	pad(1, func() { a = here() })
	pad(2, func() { b = here() })
	return int(a - b)
}()

// gcMu makes measurements take turns: each holds the GC off.
var gcMu sync.Mutex

// gcOff holds the GC off (no cycle, so no stack shrink) until the
// returned func is called.
func gcOff() func() {
	gcMu.Lock()
	pct := debug.SetGCPercent(-1) // waits for a cycle under way to end
	lim := debug.SetMemoryLimit(math.MaxInt64)
	return func() {
		debug.SetMemoryLimit(lim)
		debug.SetGCPercent(pct)
		gcMu.Unlock()
	}
}

// here is the address of a local of a frame just below its caller's, so
// it changes when the caller's stack is copied.
//
//go:noinline
func here() uintptr {
	var x byte
	return uintptr(unsafe.Pointer(&x))
}

// grow uses a frame large enough that a stack smaller than size grows
// to size for it, and small enough that size holds it; over needs more
// than size. A frame holds every array its function declares, so each
// size has a function of its own; grow's for 32 KiB is over's for 8.
func grow(size int) {
	if size == Size {
		frame8K()
	} else {
		frame32K()
	}
}

func over(size int) {
	if size == Size {
		frame32K()
	} else {
		frameOver32K()
	}
}

//go:noinline
func frame8K() byte {
	var a [Size/2 + 512]byte
	return touch(a[:])
}

//go:noinline
func frame32K() byte {
	var a [big/2 + 512]byte
	return touch(a[:])
}

//go:noinline
func frameOver32K() byte {
	var a [big]byte
	return touch(a[:])
}

// big is the stack Depth measures on.
const big = 32 << 10

//go:noinline
func touch(b []byte) byte {
	b[len(b)-1] = 1
	return b[0]
}

// pad calls f from n frames of padFrame bytes below its caller.
//
//go:noinline
func pad(n int, f func()) {
	var a [40]byte
	if n > 0 {
		pad(n-1, f)
	} else {
		f()
	}
	touch(a[:])
}

// run runs f padded by n frames on a fresh goroutine whose stack is size,
// and reports whether the stack grew. ok is false when the stack was not
// size to start with (then grew means nothing).
func run(size, n int, f func()) (grew, ok bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		grow(size)
		a0 := here()
		pad(n, f)
		grew = here() != a0
		if grew {
			ok = true // it was at least size (grow), and f grew it
			return
		}
		over(size)
		ok = here() != a0 // it was size: over grew it
	}()
	<-done
	return grew, ok
}

// Grows reports whether f, called on a goroutine whose stack is 8 KiB
// with about above bytes of it in use (to padFrame bytes, less a little
// for the goroutine's own first frames), made the runtime grow that
// stack. f runs once, with the GC off.
func Grows(t testing.TB, above int, f func()) bool {
	t.Helper()
	defer gcOff()()
	grew, ok := run(Size, above/padFrame, f)
	if !ok {
		t.Fatal("teststack: the goroutine's stack did not start at 8 KiB")
	}
	return grew
}

// Depth is how many bytes of stack f uses below its caller at its
// deepest (up to 31 KiB), to padFrame bytes: the headroom a call of
// nothing leaves on a 32 KiB stack less f's there. f runs about a dozen
// times, with the GC off.
func Depth(t testing.TB, f func()) int {
	t.Helper()
	defer gcOff()()
	return headroom(t, big, func() {}) - headroom(t, big, f)
}

func headroom(t testing.TB, size int, f func()) int {
	t.Helper()
	grew, ok := run(size, 0, f)
	if !ok {
		t.Fatalf("teststack: the goroutine's stack did not start at %d KiB", size>>10)
	}
	if grew {
		t.Fatalf("teststack: the call needs more than a %d KiB stack", size>>10)
	}
	lo, hi := 0, size/padFrame // lo fits, hi does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if g, _ := run(size, mid, f); g {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo * padFrame
}
