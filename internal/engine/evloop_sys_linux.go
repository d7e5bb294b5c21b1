//go:build linux

package engine

import (
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's reads, writes and ready-checks are on non-blocking
// descriptors: they never wait, so they are made as raw system calls,
// without telling the Go scheduler a goroutine is entering one. A write on
// loopback runs the peer's TCP receive path inside the call (tens of
// microseconds); made as an ordinary system call, Go's sysmon takes the
// P away from a loop that stays in it that long and wakes another thread
// to run it, several context switches per request (docs/performance.md).
// The one call that may wait, the blocking epoll_wait, is an ordinary one
// when the loop's P is needed elsewhere (no P left over: claimRawWait), so
// the scheduler can run other goroutines meanwhile; with a P left over it
// is raw too (waitRaw).

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// pollNow is epoll_wait that does not wait: the events ready now.
func pollNow(ep int, evs []unix.EpollEvent) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// rawWaitMax bounds a raw blocking wait (ms): a goroutine in a raw system
// call holds its P and cannot be preempted until the call returns. Go's
// preemption signal interrupts epoll_wait (EINTR), so a stop-the-world
// does not wait for it; the bound covers a process where that signal is
// off (GODEBUG=asyncpreemptoff=1).
const rawWaitMax = 10

// rawWaiters counts the process's loops that wait raw (every engine's).
var rawWaiters atomic.Int32

// claimRawWait reports whether a new loop may wait raw, and if so counts
// it (releaseRawWait uncounts it): only while a P is left over for the
// rest of the process — the phase, the governor, the watch, the timers,
// another engine's goroutines — which loops holding their Ps through
// their waits would otherwise starve. THROTTLE_EVLOOP_RAWWAIT=0 turns it
// off.
func claimRawWait() bool {
	if os.Getenv("THROTTLE_EVLOOP_RAWWAIT") == "0" {
		return false
	}
	if rawWaiters.Add(1) < int32(runtime.GOMAXPROCS(0)) {
		return true
	}
	rawWaiters.Add(-1)
	return false
}

func releaseRawWait() { rawWaiters.Add(-1) }

// waitRaw is the blocking epoll_wait as a raw system call, at most
// rawWaitMax ms: the scheduler is not told, so Go's sysmon never sees the
// loop in a system call, never hands its P to another thread, and does
// not wake every 20 µs for it.
func waitRaw(ep int, evs []unix.EpollEvent, ms int) int {
	if ms < 0 || ms > rawWaitMax {
		ms = rawWaitMax
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}
