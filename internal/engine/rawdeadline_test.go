package engine

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestRawKeptDeadline: a connection's deadline is not set again for a
// request whose own comes later (rawHost.keepDeadline), yet every attempt
// is still cut off at its own deadline: a stalled answer after a kept,
// earlier deadline waits out the attempt's whole timeout (the kept one is
// moved, not taken as the attempt's), and one with a shorter timeout than
// the deadline on the connection is not left to that later deadline.
func TestRawKeptDeadline(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	s := newRawServer(t, func(_ net.Conn, w *bufio.Writer, req *http.Request) bool {
		if req.URL.Path == "/stall" {
			<-stop // no answer, until the test ends
			return false
		}
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	t.Cleanup(func() { close(stop) }) // before the server's cleanup waits for its handlers
	r := lane(t, true, DriverConfig{})
	var res Response
	run := func(path string, timeout time.Duration) Outcome {
		t.Helper()
		req := Request{URL: s.url + path, Timeout: timeout}
		return r.Iterate(&req, time.Time{}, &res)
	}
	host := func() *rawHost { return r.t.(*rawConn).hosts[0] }

	// A timeout that holds the dial and the answer on a slow machine, and
	// ends well before the stalled attempt's below.
	const ok = time.Second
	if run("/ok", ok) != IterationOK {
		t.Fatal(res.Err)
	}
	kept := host().dl
	if kept.IsZero() {
		t.Fatal("no deadline noted on the connection after its dial")
	}
	if run("/ok", ok) != IterationOK {
		t.Fatal(res.Err)
	}
	if !host().dl.Equal(kept) {
		t.Errorf("deadline set again for a request whose own comes later: %v, was %v", host().dl, kept)
	}

	// The kept deadline (at most a second on) ends before this attempt's.
	const long = 3 * time.Second
	if out := run("/stall", long); out != IterationFailed || res.Class != ClassTimeout {
		t.Fatalf("stalled answer: outcome %v, class %v, err %v; want a failed timeout", out, res.Class, res.Err)
	}
	if res.Elapsed < long {
		t.Errorf("stalled answer cut off after %v, before its timeout %v: the kept deadline was taken as its own", res.Elapsed, long)
	}

	// A deadline 30 s on is on the new connection; this attempt's is sooner.
	if run("/ok", 30*time.Second) != IterationOK {
		t.Fatal(res.Err)
	}
	const short = 200 * time.Millisecond
	if out := run("/stall", short); out != IterationFailed || res.Class != ClassTimeout {
		t.Fatalf("stalled answer: outcome %v, class %v, err %v; want a failed timeout", out, res.Class, res.Err)
	}
	if res.Elapsed < short || res.Elapsed > 20*time.Second {
		t.Errorf("stalled answer with timeout %v cut off after %v: want its own deadline, not the connection's 30 s one", short, res.Elapsed)
	}
	if _, conns := s.stats(); conns != 2 {
		t.Errorf("%d connections, want 2 (a timed-out connection is closed)", conns)
	}
}

// TestRawKeptDeadlineWrite: a request body the server does not read
// stalls the write, after a kept earlier deadline (rawHost.moved on a
// write cut short): the attempt is cut off at its own deadline.
func TestRawKeptDeadlineWrite(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		req.Body.Close()
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		<-stop // reads nothing more
	}()
	t.Cleanup(func() { close(stop); ln.Close(); <-served })
	r := lane(t, true, DriverConfig{})
	var res Response
	// Its deadline is kept, and ends (most likely) while the body below
	// is being written.
	ok := Request{URL: "http://" + ln.Addr().String() + "/", Timeout: 2 * time.Second}
	if r.Iterate(&ok, time.Time{}, &res) != IterationOK {
		t.Fatal(res.Err)
	}
	// More than the loopback socket buffers take: the write waits.
	// Building and handing the kernel a 64 MiB request takes a while
	// under -race: with two make test runs side by side (make stress),
	// one attempt of 4 s ended with nothing written.
	const timeout = 10 * time.Second
	big := Request{Method: http.MethodPost, URL: ok.URL, Body: make([]byte, 64<<20), Timeout: timeout}
	if out := r.Iterate(&big, time.Time{}, &res); out != IterationFailed || res.Class != ClassTimeout {
		t.Fatalf("stalled write: outcome %v, class %v, err %v; want a failed timeout", out, res.Class, res.Err)
	}
	if res.Elapsed < timeout {
		t.Errorf("stalled write cut off after %v, before its timeout %v", res.Elapsed, timeout)
	}
	if res.BytesSent == 0 || res.BytesSent >= int64(len(big.Body)) {
		t.Errorf("%d bytes sent: want part of the body", res.BytesSent)
	}
}

// A deadline is kept only while it is still ahead of the attempt and no
// later than its own; one already past at the attempt's start (the
// connection sat idle past it) is replaced up front, not found by a
// failed write.
func TestKeepDeadlineOnlyAhead(t *testing.T) {
	t0 := time.Now()
	for _, c := range []struct {
		dl   time.Time
		keep bool
	}{
		{time.Time{}, false},               // none set yet
		{t0.Add(30 * time.Second), true},   // ahead, before the attempt's own
		{t0.Add(60 * time.Second), true},   // the attempt's own
		{t0.Add(61 * time.Second), false},  // later than the attempt's own
		{t0, false},                        // expiring now
		{t0.Add(-20 * time.Second), false}, // past: the connection idled through it
		{t0.Add(-time.Nanosecond), false},  // just past
		{t0.Add(time.Nanosecond), true},    // just ahead
	} {
		h := &rawHost{dl: c.dl}
		if got := h.keepDeadline(t0, 60*time.Second); got != c.keep {
			t.Errorf("deadline at t0%+v: kept %v, want %v", c.dl.Sub(t0), got, c.keep)
		}
	}
}
