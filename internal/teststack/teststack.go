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
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/throttlekit/throttle/internal/testwait"
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

// A GC halves a goroutine's stack while less than a quarter of it, less
// the runtime's no-split reserve (800 bytes; 1 600 under -race), is in
// use: 3 296 bytes of a 16 KiB stack. A stack that grew to 16 KiB for
// one deep call (a TLS handshake, a GC started at a deep point) stays so
// while its goroutine sleeps above that line.

// frame16K grows a stack to 16 KiB.
//
//go:noinline
func frame16K() byte {
	var a [Size + 512]byte
	return touch(a[:])
}

// HalvedAsleep reports whether a GC halves the 16 KiB stack of a
// goroutine with about above bytes of it in use (to padFrame bytes, less
// a little for the goroutine's own first frames) while f, called there,
// is parked in a function whose name contains in (say "(*VU).sleep"). It
// calls f twice: once without a GC, which must leave the stack where it
// was (f's deepest call fits; the stack was 16 KiB), then with one GC
// while f is parked. wake ends f's park; it is called once f is parked.
// The GC is otherwise held off.
func HalvedAsleep(t testing.TB, above int, in string, f, wake func()) bool {
	t.Helper()
	defer gcOff()()
	if moved, ok := asleep(t, above/padFrame, in, f, wake, false); moved || !ok {
		t.Fatalf("teststack: without a GC, the stack moved (%v) or was not 16 KiB (%v)", moved, !ok)
	}
	moved, _ := asleep(t, above/padFrame, in, f, wake, true)
	return moved
}

// asleep runs f below n pad frames on a fresh goroutine whose stack is 16
// KiB; once f is parked in in, it runs a GC if gc, then wakes f. moved
// is whether the stack moved (grew or shrank) meanwhile; ok whether it
// was 16 KiB (when it did not move).
func asleep(t testing.TB, n int, in string, f, wake func(), gc bool) (moved, ok bool) {
	t.Helper()
	id := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		frame16K()
		a0 := here()
		id <- goroutineID()
		pad(n, f)
		if moved = here() != a0; moved {
			return
		}
		frame32K()
		ok = here() != a0
	}()
	g := <-id
	testwait.Until(t, testwait.Deadline, "the call parked in "+in, func() bool { return parked(g, in) })
	if gc {
		runtime.GC()
	}
	wake()
	<-done
	return moved, ok
}

// goroutineID is the calling goroutine's number, as its traceback names it.
func goroutineID() string {
	buf := make([]byte, 64)
	s := string(buf[:runtime.Stack(buf, false)])
	s = strings.TrimPrefix(s, "goroutine ")
	return s[:strings.IndexByte(s, ' ')]
}

// parked reports whether goroutine id is blocked (not running, runnable
// or in a system call) with a frame whose function's name contains in.
func parked(id, in string) bool {
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(all, "\n\n") {
		head, trace, _ := strings.Cut(g, "\n")
		if !strings.HasPrefix(head, "goroutine "+id+" [") {
			continue
		}
		state := strings.TrimPrefix(head, "goroutine "+id+" [")
		for _, busy := range []string{"running", "runnable", "syscall"} {
			if strings.HasPrefix(state, busy) {
				return false
			}
		}
		return strings.Contains(trace, in)
	}
	return false
}
