//go:build linux

package engine

import (
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
// Only the one call that may wait, the blocking epoll_wait, is an ordinary
// one, so the scheduler can run other goroutines meanwhile.

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
