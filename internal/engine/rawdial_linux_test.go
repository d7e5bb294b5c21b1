package engine

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// fullBacklog is the URL of a loopback address whose listener never
// accepts and whose accept queue is full: Linux drops the SYNs of further
// connects, which hang until their deadline. (A listener made by
// net.Listen has the system's backlog, too deep to fill; this one has
// none.)
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)
	// Connect until one hangs: the queue then holds what it can.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return "http://" + addr + "/"
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i == 8 {
			t.Fatal("the accept queue never filled")
		}
	}
}

// A connect that fails ends as on fasthttp: refused, or timed out when the
// address does not answer, with the same class, error code, error text
// and no Connecting time; a later request dials again.
func TestRawConnectLikeFastHTTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		url  func(*testing.T) string
		want Class
	}{
		{"refused", refusedURL, ClassRefused},
		{"connect times out", fullBacklog, ClassTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := c.url(t)
			// An abort that can be cancelled, as a phase's: the raw lane
			// then dials a literal IP address with dialDeadline.
			abort, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got [2][2]Response
			for i, raw := range []bool{false, true} {
				r := lane(t, raw, DriverConfig{Timeout: 100 * time.Millisecond, Abort: abort})
				for k := range got[i] {
					r.Iterate(&Request{URL: url}, time.Time{}, &got[i][k])
				}
			}
			for k := range 2 {
				f, w := got[0][k], got[1][k]
				if f.Class != c.want || w.Class != c.want || f.ErrorCode != w.ErrorCode {
					t.Errorf("request %d: fasthttp %v %d (%v), raw %v %d (%v); want %v", k, f.Class, f.ErrorCode, f.Err, w.Class, w.ErrorCode, w.Err, c.want)
				}
				if f.Err == nil || w.Err == nil || f.Err.Error() != w.Err.Error() {
					t.Errorf("request %d: error %v on fasthttp, %v raw", k, f.Err, w.Err)
				}
				if f.Timings.Connecting != 0 || w.Timings.Connecting != 0 {
					t.Errorf("request %d: connecting %v on fasthttp, %v raw", k, f.Timings.Connecting, w.Timings.Connecting)
				}
			}
		})
	}
}

// Abort cuts a connect in progress off: the attempt ends aborted at once,
// not at its timeout.
func TestRawAbortConnect(t *testing.T) {
	t.Parallel()
	url := fullBacklog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := lane(t, true, DriverConfig{Abort: ctx, Timeout: time.Hour})
	done := make(chan Outcome, 1)
	go func() {
		var res Response
		done <- r.Iterate(&Request{URL: url}, time.Time{}, &res)
	}()
	// A literal IPv4 address is dialled on the attempt's own goroutine
	// (connectDirect): wait until this test's is in the connect's wait
	// (other parallel tests connect too).
	testwait.Until(t, testwait.Deadline, "this test's attempt in a connect", func() bool {
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "(*sockConn).connect(") && strings.Contains(g, "TestRawAbortConnect") &&
				strings.Contains(g, "internal/poll.(*FD).RawWrite") {
				return true
			}
		}
		return false
	})
	cancel()
	if out := testwait.Receive(t, done, "the aborted attempt"); out != IterationAborted {
		t.Errorf("outcome %v, want aborted", out)
	}
}
