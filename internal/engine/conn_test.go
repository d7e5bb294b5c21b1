package engine

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
)

// rawServe answers every request on loopback with the bytes reply, closing
// the connection after each response when closeAfter is set. It returns
// the target and a count of the requests it read.
func rawServe(t *testing.T, reply string, closeAfter bool) ([]targets.Target, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					n.Add(1)
					if _, err := io.WriteString(c, reply); err != nil || closeAfter {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	u, _ := url.Parse("http://" + ln.Addr().String() + "/")
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}, &n
}

// A worker's own connection reads every framing a server may use, drops a
// connection the server closes, and sends a GET again when the server had
// closed a kept connection before answering: none of it is the target's
// failure.
func TestConnFraming(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		reply      string
		closeAfter bool
		head       bool
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", false, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n\r\n", false, false},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n", true, false},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nok\n", true, false},
		{"closed while kept", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", true, false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n", false, false},
		{"head", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", false, true},
		{"lower-case chunked with trailer", "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\ncontent-length: 99\r\n\r\n3;x=y\r\nok\n\r\n0\r\nX-Sum: 1\r\n\r\n", false, false},
		{"no content", "HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n", false, false},
		{"not modified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n", false, false},
		{"1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nok\n", false, false},
		{"folded header", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 3\r\n\r\nok\n", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgts, n := rawServe(t, tc.reply, tc.closeAfter)
			if tc.head {
				tgts[0].Method = "HEAD"
			}
			res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true, Duration: 100 * time.Millisecond, Timeout: 2 * time.Second})
			c := res.Counts
			if c.OK == 0 || c.Failed != 0 || c.Aborted != 0 {
				t.Fatalf("counts %+v: every attempt must succeed", c)
			}
			if got := n.Load(); got < int64(c.OK) {
				t.Errorf("server read %d requests, engine counted %d ok", got, c.OK)
			}
		})
	}
}

// A response cut short is the target's failure, classed reset; one that is
// not HTTP is classed other.
func TestConnBroken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reply string
		class       Class
	}{
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", ClassReset},
		{"truncated head", "HTTP/1.1 200 OK\r\nContent-Le", ClassReset},
		{"truncated chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nok", ClassReset},
		{"not http", "SSH-2.0-OpenSSH_9.6\r\n\r\n", ClassOther},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: 3x\r\n\r\nok\n", ClassOther},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nok\n", ClassOther},
		{"unknown coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok\n", ClassOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tgts, _ := rawServe(t, tc.reply, true)
			res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 100 * time.Millisecond})
			if c := res.Counts; c.Failed == 0 || c.Classes[tc.class] != c.Failed || c.OK != 0 {
				t.Errorf("counts %+v: every attempt must fail as %v", c, tc.class)
			}
		})
	}
}

// With more distinct addresses than a worker indexes, each address still
// gets one kept connection that carries all its requests.
func TestManyAddresses(t *testing.T) {
	t.Parallel()
	var dials, hits atomic.Int64
	var list []targets.Target
	for range maxCachedTargets + 2 {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				dials.Add(1)
			}
		}
		srv.Start()
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL + "/")
		list = append(list, targets.Target{Method: "GET", URL: u, Header: http.Header{}})
	}
	e, err := New(Config{Targets: list, Limits: governor.NewLimits(governor.Concurrency, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.addrs) != len(list) {
		t.Fatalf("%d addresses for %d servers", len(e.addrs), len(list))
	}
	res := run(t, Config{Targets: list, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 300 * time.Millisecond})
	c := res.Counts
	if c.OK < uint64(2*len(list)) || c.Failed != 0 || hits.Load() != int64(c.OK) {
		t.Errorf("counts %+v, %d requests served: each of %d addresses must be sent to more than once", c, hits.Load(), len(list))
	}
	if d := dials.Load(); d != int64(len(list)) {
		t.Errorf("%d connections for %d addresses: one worker keeps one per address", d, len(list))
	}
}

// A worker's own connection sends each target byte for byte as the HTTP
// transport would.
func TestWireMatchesTransport(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var buf bytes.Buffer
			req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &buf)))
			if err == nil {
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
			}
			c.Close()
			got <- buf.Bytes()
		}
	}()
	base := "http://" + ln.Addr().String()
	mk := func(method, path string, h http.Header, body []byte) targets.Target {
		u, _ := url.Parse(base + path)
		return targets.Target{Method: method, URL: u, Header: h, Body: body}
	}
	list := []targets.Target{
		mk("GET", "/a?x=1&y=%20", http.Header{"X-T": {"1", "2"}, "User-Agent": {"me"}}, nil),
		mk("POST", "/b", http.Header{"Content-Type": {"text/plain"}}, []byte("hello")),
		mk("POST", "/c", http.Header{}, nil),
		mk("HEAD", "/d", http.Header{"Host": {"example.test"}}, nil),
		mk("DELETE", "/e", http.Header{"Idempotency-Key": {"k"}}, []byte("{}")),
	}
	e, err := New(Config{Targets: list, Limits: governor.NewLimits(governor.Concurrency, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.transport.CloseIdleConnections()
	w := e.newWorker(0)
	for i := range list {
		if e.wires[i].bytes == nil {
			t.Fatalf("target %d: no plain-http form", i)
		}
		resp, err := e.transport.RoundTrip(w.arm(i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		w.disarm()
		if sent := <-got; !bytes.Equal(sent, e.wires[i].bytes) {
			t.Errorf("target %d: transport sent\n%q\nworker sends\n%q", i, sent, e.wires[i].bytes)
		}
	}
	w.close()
	for i, want := range []bool{true, false, false, true, true} {
		if e.wires[i].replayable != want {
			t.Errorf("target %d: replayable %v, want %v", i, e.wires[i].replayable, want)
		}
	}
}
