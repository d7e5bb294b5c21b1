//go:build linux

package engine

import (
	"bufio"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// A loop waits raw only while a P is left over for the rest of the
// process, counting every engine's raw-waiting loops, and not when
// THROTTLE_EVLOOP_RAWWAIT=0.
func TestEvLoopRawWaitChosen(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if n := rawWaiters.Load(); n != 0 {
		t.Fatalf("%d loops of earlier tests still wait raw", n)
	}
	runtime.GOMAXPROCS(1)
	if claimRawWait() {
		releaseRawWait()
		t.Error("GOMAXPROCS 1: raw wait granted, which would hold the only P")
	}
	runtime.GOMAXPROCS(3)
	if !claimRawWait() || !claimRawWait() {
		t.Fatal("GOMAXPROCS 3: raw wait refused to one of the first two loops")
	}
	if claimRawWait() {
		t.Error("GOMAXPROCS 3, two loops waiting raw: a third granted, no P left over")
	}
	releaseRawWait()
	if !claimRawWait() {
		t.Error("a loop's release did not let another wait raw")
	}
	releaseRawWait()
	releaseRawWait()
	t.Setenv("THROTTLE_EVLOOP_RAWWAIT", "0")
	if claimRawWait() {
		t.Error("THROTTLE_EVLOOP_RAWWAIT=0: raw wait granted")
	}
	if n := rawWaiters.Load(); n != 0 {
		t.Errorf("%d raw waits counted after every release", n)
	}
}

// Waiting raw or through the scheduler, a loop's run counts the same:
// every attempt answered, and a never-answering target's attempts end at
// their timeout although the loop has nothing else to wake for.
func TestEvLoopRawWaitRuns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	ok := rawTarget(t, raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true))
	silent := rawTarget(t, func(c net.Conn, _ *bufio.Writer) bool {
		c.Read(make([]byte, 1)) // no answer: until the client gives up
		return false
	})
	for _, env := range []string{"", "0"} {
		t.Run("THROTTLE_EVLOOP_RAWWAIT="+env, func(t *testing.T) {
			t.Setenv("THROTTLE_EVLOOP_RAWWAIT", env)
			res := run(t, Config{Targets: ok, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true,
				Duration: 200 * time.Millisecond})
			n := res.Counts
			if res.Transport != TransportEvLoop || n.OK == 0 || n.Failed != 0 || n.Started != n.OK+n.Aborted {
				t.Errorf("answering target on %s: %+v", res.Transport, n)
			}
			res = run(t, Config{Targets: silent, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true,
				Duration: 200 * time.Millisecond, Timeout: 50 * time.Millisecond})
			n = res.Counts
			if n.Classes[ClassTimeout] == 0 || n.OK != 0 || n.Started != n.OK+n.Failed+n.Aborted {
				t.Errorf("silent target: %+v, want timeouts", n)
			}
			if w := rawWaiters.Load(); w != 0 {
				t.Errorf("%d raw waits still counted after the runs", w)
			}
		})
	}
}
