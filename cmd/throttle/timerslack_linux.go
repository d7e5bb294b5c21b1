//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A thread's timer slack is its own (prctl PR_SET_TIMERSLACK acts on the
// calling thread alone) and a new thread or process starts with its
// creator's, kept across execve. The Go runtime makes its threads (sysmon
// first, before any Go code runs) from the threads it has, so a whole
// process's slack is set on the thread that starts it: the thread that
// forks a child (startWithTimerSlack), or the thread that execs this
// program again (reexecWithTimerSlack).

// reexecEnv marks the process reexecWithTimerSlack started: it does not
// exec again. It is taken out of the environment at once, so the run
// (a script's __ENV, its children) never sees it.
const reexecEnv = "THROTTLE_TIMERSLACK_EXECED"

// onSlackThread runs fn on one OS thread whose slack is d, and puts the
// thread's own slack back after (the runtime may give the thread to any
// goroutine once unlocked). It does not run fn when the slack cannot be
// set (a seccomp filter, say): ran is false and err says why.
func onSlackThread(d time.Duration, fn func() error) (ran bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("prctl(PR_GET_TIMERSLACK): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(d), 0, 0, 0); err != nil {
		return false, fmt.Errorf("prctl(PR_SET_TIMERSLACK): %w", err)
	}
	defer func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }()
	return true, fn()
}

// startWithTimerSlack starts c with timer slack d on every thread of it
// (d <= 0, or a slack that cannot be set: the kernel's default, as
// c.Start).
func startWithTimerSlack(c *exec.Cmd, d time.Duration) error {
	if d > 0 {
		if ran, err := onSlackThread(d, c.Start); ran { // Go's fork clones the calling thread
			return err
		}
	}
	return c.Start()
}

// reexecWithTimerSlack makes this process run again as itself with timer
// slack d on every thread: it execs /proc/self/exe with the same
// arguments and environment (plus reexecEnv) from a thread whose slack is
// d. The process keeps its pid, its descriptors (stdin, stdout, stderr)
// and its parent, so signals and the exit code are the new image's. It
// returns only when it did not exec: in the process it started, when d <= 0,
// when every thread already has d (a start-up with it), or on an error
// (the slack cannot be set, or the exec failed).
func reexecWithTimerSlack(d time.Duration) error {
	if _, ok := os.LookupEnv(reexecEnv); ok {
		return os.Unsetenv(reexecEnv)
	}
	if d <= 0 {
		return nil
	}
	if cur, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil && cur == int(d) {
		return nil // the process started with it (every thread inherited it)
	}
	_, err := onSlackThread(d, func() error {
		return syscall.Exec("/proc/self/exe", os.Args, append(os.Environ(), reexecEnv+"=1"))
	})
	return fmt.Errorf("timer slack not set: %w", err)
}
