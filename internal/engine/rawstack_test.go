package engine

import (
	"context"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/teststack"
)

// nginxAnswer is bench/vus.sh's answer, headers as nginx sends them.
const nginxAnswer = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 06 Dec 2026 13:00:00 GMT\r\n" +
	"Content-Type: text/html\r\nContent-Length: 17\r\nLast-Modified: Sun, 06 Dec 2026 12:00:00 GMT\r\n" +
	"Connection: keep-alive\r\nETag: \"6752f0c0-11\"\r\nAccept-Ranges: bytes\r\n\r\nhello from nginx\n"

// A connection's first request needs no more stack than a keep-alive
// one: the connect to a literal IPv4 address runs on the runner's
// goroutine through a few shallow frames (connectDirect), any other on a
// goroutine of its own (connectJob), not under the runner's frames, where
// net's dial path took a first request 2 KiB deeper than the others. A fresh runner's first request also builds its
// wire request and registers its host's abort hook.
func TestRawConnectNoDeeperThanRequest(t *testing.T) {
	s := newRawServer(t, answer(nginxAnswer, true))
	abort, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := lane(t, true, DriverConfig{Abort: abort})
	req := &Request{Method: "GET", URL: s.url + "/index.html"}
	var res Response
	first := teststack.Depth(t, func() {
		fresh := r.d.Runner()
		fresh.Iterate(req, time.Time{}, &res)
		fresh.Close()
	})
	if res.Err != nil || res.Status != 200 {
		t.Fatalf("status %d, err %v", res.Status, res.Err)
	}
	r.Iterate(req, time.Time{}, &res)
	// A keep-alive request that builds its wire request again (a new
	// *Request), as the first one does: since its response's headers are
	// no longer parsed on the way (plainCheck), the build is the deepest
	// part of either.
	again := teststack.Depth(t, func() {
		next := *req
		r.Iterate(&next, time.Time{}, &res)
	})
	if res.Err != nil || res.Status != 200 || res.Timings.Connecting != 0 {
		t.Fatalf("status %d, err %v, connecting %v", res.Status, res.Err, res.Timings.Connecting)
	}
	// 256 bytes: the measure's step (80) and the first request's own
	// setup (the abort hook's registration).
	if first > again+256 {
		t.Errorf("a first request is %d bytes deep, a keep-alive one %d", first, again)
	}
}
