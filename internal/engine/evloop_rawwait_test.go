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

// A loop waits raw only with a P left over for the rest of the process,
// and not when THROTTLE_EVLOOP_RAWWAIT=0.
func TestEvLoopRawWaitChosen(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	if rawWaitOK(1) {
		t.Error("GOMAXPROCS 1, one loop: raw wait chosen, which would hold the only P")
	}
	runtime.GOMAXPROCS(2)
	if !rawWaitOK(1) {
		t.Error("GOMAXPROCS 2, one loop: raw wait not chosen")
	}
	if rawWaitOK(2) {
		t.Error("GOMAXPROCS 2, two loops: raw wait chosen, no P left over")
	}
	t.Setenv("THROTTLE_EVLOOP_RAWWAIT", "0")
	if rawWaitOK(1) {
		t.Error("THROTTLE_EVLOOP_RAWWAIT=0: raw wait chosen")
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
		})
	}
}
