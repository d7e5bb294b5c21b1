package engine

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// The fasthttp transport puts each attempt's deadline on its connection
// itself (tracedConn), not through fasthttp's per-request timeout: the
// first attempt on a new connection keeps its deadline although fasthttp
// clears the connection's deadlines before reading its first answer, and
// a later attempt on the same keep-alive connection gets its own deadline
// — here an earlier one than the attempt before, so the attempt ends only
// if its deadline, not the first one's hour, is on the connection.
func TestFastDeadlinePerAttempt(t *testing.T) {
	var n atomic.Int32
	s := newRawServer(t, func(c net.Conn, w *bufio.Writer, _ *http.Request) bool {
		if n.Add(1) == 1 {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			return true
		}
		c.Read(make([]byte, 1)) // no answer: until the client gives up
		return false
	})
	d, err := NewDriver(DriverConfig{Meter: NewMeter(), Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r := d.Runner()
	defer r.Close()
	if _, ok := r.t.(*fastConn); !ok {
		t.Fatalf("transport %T, want the fasthttp one", r.t)
	}
	req := &Request{Method: "GET", URL: s.url + "/", DiscardBody: true}

	var res Response
	r.t.send(req, time.Now(), time.Hour, &res)
	if res.Err != nil || res.Status != 200 {
		t.Fatalf("first attempt: %v, status %d", res.Err, res.Status)
	}

	type out struct {
		res        Response
		t0, end    time.Time
		connecting time.Duration
	}
	done := make(chan out, 1)
	go func() {
		var o out
		o.t0 = time.Now()
		o.end = r.t.send(req, o.t0, 50*time.Millisecond, &o.res)
		done <- o
	}()
	o := testwait.Receive(t, done, "the second attempt to time out")
	if class, _ := classify(o.res.Err, o.res.Status); class != ClassTimeout {
		t.Fatalf("second attempt: %v (class %v), want a timeout", o.res.Err, class)
	}
	if o.end.Before(o.t0.Add(50 * time.Millisecond)) {
		t.Errorf("second attempt ended %v after it began, before its 50ms deadline", o.end.Sub(o.t0))
	}
	if o.res.Timings.Connecting != 0 {
		t.Errorf("second attempt dialled (connecting %v): the keep-alive connection was not reused", o.res.Timings.Connecting)
	}

	// A new connection's first attempt: the server answers nothing more.
	go func() {
		var o out
		o.t0 = time.Now()
		o.end = r.t.send(req, o.t0, 50*time.Millisecond, &o.res)
		done <- o
	}()
	o = testwait.Receive(t, done, "a new connection's first attempt to time out")
	if class, _ := classify(o.res.Err, o.res.Status); class != ClassTimeout || o.res.Timings.Connecting == 0 {
		t.Fatalf("third attempt: %v (class %v, connecting %v), want a timeout on a new connection", o.res.Err, class, o.res.Timings.Connecting)
	}
}
