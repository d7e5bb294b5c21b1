package engine

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer is a loopback HTTP/1.1 server that answers each request with
// a function of its own and records every request's bytes as they came
// off the wire, and how many connections it accepted.
type rawServer struct {
	url   string
	mu    sync.Mutex
	wires []string // each request's bytes, in order
	conns int
}

// newRawServer serves with answer, called once per request read (its body
// read too), until answer returns false; the connection is then closed.
func newRawServer(t *testing.T, answer func(c net.Conn, w *bufio.Writer, req *http.Request) bool) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{url: "http://" + ln.Addr().String()}
	var (
		conns []net.Conn
		wg    sync.WaitGroup
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			conns = append(conns, c)
			s.conns++
			s.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				var rec bytes.Buffer
				r, w := bufio.NewReader(io.TeeReader(c, &rec)), bufio.NewWriter(c)
				for {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					// The client waits for the answer, so what was read is
					// this request, whole.
					s.mu.Lock()
					s.wires = append(s.wires, rec.String())
					s.mu.Unlock()
					rec.Reset()
					keep := answer(c, w, req)
					if w.Flush() != nil || !keep {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *rawServer) stats() (wires []string, conns int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.wires...), s.conns
}

// answer writes s to every request and keeps the connection (keep) or not.
func answer(s string, keep bool) func(net.Conn, *bufio.Writer, *http.Request) bool {
	return func(_ net.Conn, w *bufio.Writer, _ *http.Request) bool {
		w.WriteString(s)
		return keep
	}
}

// scriptFailed is a script lane's FailedFunc without expected statuses.
func scriptFailed(r *Response) bool { return r.Err != nil || r.Status >= 400 }

// lane makes a driver and runner as a script's request lane has them, on
// the raw transport (raw) or fasthttp.
func lane(t *testing.T, raw bool, cfg DriverConfig) *Runner {
	t.Helper()
	cfg.Meter, cfg.RawHTTP = NewMeter(), raw
	if cfg.Failed == nil {
		cfg.Failed = scriptFailed
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	d, err := NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := TransportFastHTTP
	if raw {
		want = TransportRaw
	}
	if d.Transport() != want {
		t.Fatalf("transport %s, want %s (is %s set?)", d.Transport(), want, TransportEnv)
	}
	r := d.Runner()
	t.Cleanup(func() { r.Close(); d.Close() })
	return r
}

func transportName2(raw bool) string {
	if raw {
		return TransportRaw
	}
	return TransportFastHTTP
}

// The raw transport writes the bytes the fasthttp transport writes, for
// every kind of request a script makes: request URI, Host (of the URL, of
// Request.Host or of a Host header), User-Agent (the default, or the
// request's in any casing), special and ordinary headers in fasthttp's
// order and casing, Content-Length for a body (on GET and HEAD too) and
// no Content-Type unless given, Connection: close.
func TestRawWireLikeFastHTTP(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true))
	large := strings.Repeat("b", 4096)
	for _, c := range []Request{
		{URL: s.url + "/a/b?q=1&r=%20x#frag"},
		{URL: s.url},
		{URL: s.url + "/x/../y/./z"},
		{Method: "HEAD", URL: s.url + "/h"},
		{Method: "DELETE", URL: s.url + "/d"},
		{Method: "POST", URL: s.url + "/p", Body: []byte("hello")},
		{Method: "POST", URL: s.url + "/p", Body: []byte(large), Header: http.Header{"Content-Type": {"text/plain"}}},
		{Method: "PUT", URL: s.url + "/e", Body: []byte{}},
		{Method: "GET", URL: s.url + "/g", Body: []byte("get body")},
		{Method: "HEAD", URL: s.url + "/g", Body: []byte("head body")},
		{Method: "patch", URL: s.url + "/lower-case-method", Body: []byte("x")},
		{URL: s.url + "/h", Host: "example.test"},
		{URL: s.url + "/h", Header: http.Header{"Host": {"other.test"}}},
		{URL: s.url + "/h", Header: http.Header{
			"x-lower": {"1", "2"}, "user-agent": {"mine/1"}, "Connection": {"close"},
			"Cookie": {"a=1; b=2"}, "Content-Type": {"a/b"},
		}},
		// One ordinary header name per request: fasthttp adds them in the
		// map's order, which is random.
		{URL: s.url + "/h", Header: http.Header{"Accept-Encoding": {"gzip, deflate"}}},
		{URL: s.url + "/h", Header: http.Header{"User-Agent": {"k6/throttle"}, "Content-Length": {"0"}}},
	} {
		var got [2]string
		for i, raw := range []bool{false, true} {
			r := lane(t, raw, DriverConfig{})
			var res Response
			req := c
			if r.Iterate(&req, time.Time{}, &res) != IterationOK {
				t.Fatalf("%s %s on %s: %v (status %d)", c.Method, c.URL, transportName2(raw), res.Err, res.Status)
			}
			wires, _ := s.stats()
			got[i] = wires[len(wires)-1]
		}
		if got[0] != got[1] || got[0] == "" {
			t.Errorf("%s %s:\nfasthttp %q\nraw      %q", c.Method, c.URL, got[0], got[1])
		}
	}
}

// What a script reads of one response is the same on both transports:
// status, protocol, body, headers (lazy: Headers and HeaderValues), the
// bytes on the wire and the redirect's Location; and broken answers fail
// in the same class with the same error code. The servers are the event
// loop's faulty ones (evloop_test.go) and a few a script meets.
func TestRawOutcomesLikeFastHTTP(t *testing.T) {
	t.Parallel()
	type server = func(net.Conn, *bufio.Writer, *http.Request) bool
	mib := strings.Repeat("x", 1<<20)
	for _, c := range []struct {
		name   string
		srv    server
		want   Class
		cfg    DriverConfig
		mod    func(*Request)
		repeat int // requests on one runner (default 2: the second reuses or redials)
	}{
		{name: "content-length", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello", true)},
		{name: "chunked", srv: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer-X: 1\r\n\r\n", true)},
		{name: "HTTP/1.0, body until close", srv: answer("HTTP/1.0 200 OK\r\nServer: old\r\n\r\nhello, until the close", false)},
		{name: "HTTP/1.0 keep-alive", srv: answer("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", true)},
		{name: "Connection: close", srv: answer("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false)},
		{name: "closes after each answer, unannounced", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false), repeat: 3},
		{name: "1 MiB body, chunked", srv: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n"+mib+"\r\n0\r\n\r\n", true)},
		{name: "1 MiB body", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n"+mib, true)},
		{name: "1 MiB body, discarded", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n"+mib, true),
			mod: func(r *Request) { r.DiscardBody = true }},
		{name: "body discarded, headers kept", srv: answer("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nContent-Length: 3\r\n\r\nabc", true),
			mod: func(r *Request) { r.DiscardBody, r.KeepHeader = true, true }},
		{name: "body past the body limit", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n"+mib, true),
			cfg: DriverConfig{BodyLimit: 1000}, want: ClassOther},
		{name: "chunked body past the body limit", srv: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n"+mib+"\r\n0\r\n\r\n", true),
			cfg: DriverConfig{BodyLimit: 1000}, want: ClassOther},
		{name: "empty body", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true)},
		{name: "204", srv: answer("HTTP/1.1 204 No Content\r\n\r\n", true)},
		{name: "HEAD", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", true), mod: func(r *Request) { r.Method = "HEAD" }},
		{name: "100 Continue first", srv: answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true)},
		{name: "12 KiB of headers", srv: answer("HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("h", 12<<10)+"\r\nContent-Length: 2\r\n\r\nok", true)},
		{name: "trailer of 6 KiB", srv: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: "+strings.Repeat("t", 6<<10)+"\r\n\r\n", true)},
		// header blocks plainCheck leaves to fasthttp's parse at once (header.go)
		{name: "Trailer declared", srv: answer("HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n", true)},
		{name: "control byte in a value", srv: answer("HTTP/1.1 200 OK\r\nX-A: 1\x01\r\nContent-Length: 2\r\n\r\nok", false), want: ClassOther},
		{name: "Content-Length twice", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false), want: ClassOther},
		{name: "cookies", srv: answer("HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nset-cookie: b=2\r\nContent-Length: 0\r\n\r\n", true)},
		{name: "redirect, not followed", srv: answer("HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\n\r\n", true)},
		{name: "503", srv: answer("HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy", true), want: Class5xx},
		{name: "429", srv: answer("HTTP/1.1 429 Slow Down\r\nContent-Length: 0\r\n\r\n", true), want: Class429},
		{name: "malformed status line", srv: answer("HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok", false), want: ClassOther},
		{name: "not HTTP at all", srv: answer("SSH-2.0-OpenSSH_9.6\r\n", false), want: ClassOther},
		{name: "invalid chunked encoding", srv: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n", false), want: ClassOther},
		{name: "status line, then close", srv: answer("HTTP/1.1 200 OK\r\n", false), want: ClassReset},
		{name: "body cut off", srv: answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false), want: ClassReset},
		{name: "closed without an answer", srv: answer("", false), want: ClassReset},
		{name: "reset after headers", srv: func(c net.Conn, w *bufio.Writer, _ *http.Request) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
			w.Flush()
			c.(*net.TCPConn).SetLinger(0) // RST, not FIN
			return false
		}, want: ClassReset},
		{name: "absurd header", srv: func(_ net.Conn, w *bufio.Writer, _ *http.Request) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nX-Huge: " + strings.Repeat("a", 64<<10))
			w.Flush()
			return false
		}, want: ClassOther},
		{name: "body stalls", srv: func(c net.Conn, w *bufio.Writer, _ *http.Request) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			w.Flush()
			c.Read(make([]byte, 1)) // until the client gives up
			return false
		}, want: ClassTimeout, cfg: DriverConfig{Timeout: 100 * time.Millisecond}},
		{name: "chunked body stalls", srv: func(c net.Conn, w *bufio.Writer, _ *http.Request) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
			w.Flush()
			c.Read(make([]byte, 1))
			return false
		}, want: ClassTimeout, cfg: DriverConfig{Timeout: 100 * time.Millisecond}},
		{name: "no answer", srv: func(c net.Conn, _ *bufio.Writer, _ *http.Request) bool {
			c.Read(make([]byte, 1))
			return false
		}, want: ClassTimeout, cfg: DriverConfig{Timeout: 100 * time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newRawServer(t, c.srv)
			n := c.repeat
			if n == 0 {
				n = 2
			}
			var got [2][]Response
			var conns [2]int
			for i, raw := range []bool{false, true} {
				r := lane(t, raw, c.cfg)
				_, before := s.stats()
				for range n {
					req := Request{URL: s.url + "/x"}
					if c.mod != nil {
						c.mod(&req)
					}
					var res Response
					r.Iterate(&req, time.Time{}, &res)
					res.Headers()
					got[i] = append(got[i], res)
				}
				_, after := s.stats()
				conns[i] = after - before
			}
			for k := range n {
				f, w := got[0][k], got[1][k]
				if f.Class != c.want || w.Class != c.want {
					t.Errorf("request %d: class fasthttp %v (%v), raw %v (%v); want %v", k, f.Class, f.Err, w.Class, w.Err, c.want)
				}
				if f.ErrorCode != w.ErrorCode || f.Status != w.Status || f.Proto != w.Proto || f.location != w.location {
					t.Errorf("request %d: fasthttp %d %d %q %q, raw %d %d %q %q", k, f.ErrorCode, f.Status, f.Proto, f.location,
						w.ErrorCode, w.Status, w.Proto, w.location)
				}
				if !bytes.Equal(f.Body, w.Body) || (f.Body == nil) != (w.Body == nil) || !reflect.DeepEqual(f.Header, w.Header) {
					t.Errorf("request %d: body %d bytes (nil %v), headers %v on fasthttp; %d (nil %v), %v raw", k,
						len(f.Body), f.Body == nil, f.Header, len(w.Body), w.Body == nil, w.Header)
				}
				if c.want == ClassOK && (f.BytesSent != w.BytesSent || f.BytesReceived != w.BytesReceived) {
					t.Errorf("request %d: bytes sent/received %d/%d on fasthttp, %d/%d raw", k, f.BytesSent, f.BytesReceived, w.BytesSent, w.BytesReceived)
				}
			}
			if c.want == ClassOK && conns[0] != conns[1] {
				t.Errorf("connections: fasthttp %d, raw %d", conns[0], conns[1])
			}
		})
	}
}

// A raw lane keeps one connection per host across requests (a new
// connection shows Connecting, a reused one none); a request asking for
// Connection: close, or an answer with it, ends the connection; an idle
// connection the server closed is redialled for an idempotent request, as
// on fasthttp.
func TestRawKeepAlive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		srv       func(net.Conn, *bufio.Writer, *http.Request) bool
		hdr       http.Header
		method    string
		wantConns int
		wantFails int
	}{
		{"reused", answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true), nil, "GET", 1, 0},
		{"Connection: close asked", answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true), http.Header{"Connection": {"close"}}, "GET", 3, 0},
		{"Connection: close answered", answer("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false), nil, "GET", 3, 0},
		// The server hangs up after each answer without saying so: the
		// next GET finds the connection closed and is sent again on a new
		// one; a POST is not resent and fails (class reset).
		{"closed while idle, GET", answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false), nil, "GET", 3, 0},
		{"closed while idle, POST", answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false), nil, "POST", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newRawServer(t, c.srv)
			r := lane(t, true, DriverConfig{})
			req := Request{Method: c.method, URL: s.url + "/", Header: c.hdr}
			fails := 0
			for i := range 3 {
				var res Response
				if r.Iterate(&req, time.Time{}, &res) != IterationOK {
					fails++
					continue
				}
				if dialed := res.Timings.Connecting > 0; dialed != (i == 0 || c.wantConns > 1) {
					t.Errorf("request %d: connecting %v", i, res.Timings.Connecting)
				}
			}
			if _, conns := s.stats(); conns != c.wantConns || fails != c.wantFails {
				t.Errorf("%d connections, %d failed; want %d, %d", conns, fails, c.wantConns, c.wantFails)
			}
		})
	}
}

// The phases of an attempt: waiting runs to the first byte of the answer,
// receiving to its last, and the whole attempt is Elapsed.
func TestRawTimings(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, func(_ net.Conn, w *bufio.Writer, _ *http.Request) bool {
		time.Sleep(30 * time.Millisecond)
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab")
		w.Flush()
		time.Sleep(20 * time.Millisecond)
		w.WriteString("cd")
		return true
	})
	res := abcdAnswer(t, s)
	tm := res.Timings
	// The answer's last bytes came 20 ms after its first; a VU that got
	// to its first read late sees them together, so only the sum holds.
	if tm.Waiting < 30*time.Millisecond || tm.Waiting+tm.Receiving < 50*time.Millisecond || tm.Blocked != 0 ||
		tm.Duration != tm.Sending+tm.Waiting+tm.Receiving || res.Elapsed < tm.Duration+tm.Connecting {
		t.Errorf("timings %+v, elapsed %v", tm, res.Elapsed)
	}
}

// An answer that comes whole in the read that brings its first byte has
// one reading for its first and last byte: receiving is 0, waiting runs to
// that read, and the attempt ends there (Elapsed covers the phases). An
// answer in two parts still ends at its last (TestRawTimings).
func TestRawTimingsOneRead(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, func(_ net.Conn, w *bufio.Writer, _ *http.Request) bool {
		time.Sleep(30 * time.Millisecond)
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd")
		return true
	})
	res := abcdAnswer(t, s)
	tm := res.Timings
	if tm.Receiving != 0 || tm.Waiting < 30*time.Millisecond || tm.Duration != tm.Sending+tm.Waiting ||
		res.Elapsed != tm.Connecting+tm.Duration {
		t.Errorf("timings %+v, elapsed %v", tm, res.Elapsed)
	}
}

// abcdAnswer is a raw lane's answer from s, which must be "abcd".
func abcdAnswer(t *testing.T, s *rawServer) Response {
	t.Helper()
	r := lane(t, true, DriverConfig{})
	var res Response
	if r.Iterate(&Request{URL: s.url + "/"}, time.Time{}, &res) != IterationOK || string(res.Body) != "abcd" {
		t.Fatalf("%v %q", res.Err, res.Body)
	}
	return res
}

// Abort cuts an attempt in flight off: it ends aborted, at once.
func TestRawAbort(t *testing.T) {
	t.Parallel()
	got := make(chan struct{})
	s := newRawServer(t, func(c net.Conn, _ *bufio.Writer, _ *http.Request) bool {
		close(got)
		c.Read(make([]byte, 1)) // never answers
		return false
	})
	ctx, cancel := context.WithCancel(context.Background())
	r := lane(t, true, DriverConfig{Abort: ctx, Timeout: time.Hour})
	go func() { <-got; cancel() }()
	var res Response
	if out := r.Iterate(&Request{URL: s.url + "/"}, time.Time{}, &res); out != IterationAborted {
		t.Errorf("outcome %v, err %v", out, res.Err)
	}
}

// Redirects are followed above the transport, each hop on the lane's
// connection, as on fasthttp.
func TestRawRedirects(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, func(_ net.Conn, w *bufio.Writer, req *http.Request) bool {
		if req.URL.Path == "/a" {
			w.WriteString("HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
		} else {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")
		}
		return true
	})
	for _, raw := range []bool{false, true} {
		r := lane(t, raw, DriverConfig{})
		var res Response
		r.Iterate(&Request{URL: s.url + "/a", Redirects: 5}, time.Time{}, &res)
		if res.Status != 200 || string(res.Body) != "b" || len(res.Hops) != 1 || res.Hops[0].Status != 302 ||
			res.URL != s.url+"/b" || res.Hops[0].BytesReceived == 0 {
			t.Errorf("%s: %d %q, hops %+v, url %s", transportName2(raw), res.Status, res.Body, res.Hops, res.URL)
		}
		// A discarded answer's Location is still read.
		r.Iterate(&Request{URL: s.url + "/a", Redirects: 5, DiscardBody: true}, time.Time{}, &res)
		if res.Status != 200 || res.Body != nil || len(res.Hops) != 1 {
			t.Errorf("%s, body discarded: %d, hops %+v", transportName2(raw), res.Status, res.Hops)
		}
	}
	if _, conns := s.stats(); conns != 2 {
		t.Errorf("%d connections for two lanes", conns)
	}
}

// https goes over fasthttp on a raw lane, as before.
func TestRawHTTPSOnFastHTTP(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("tls")) }))
	t.Cleanup(srv.Close)
	r := lane(t, true, DriverConfig{Insecure: true})
	var res Response
	if r.Iterate(&Request{URL: srv.URL + "/"}, time.Time{}, &res) != IterationOK || string(res.Body) != "tls" || res.Timings.TLSHandshaking <= 0 {
		t.Fatalf("%v %q %+v", res.Err, res.Body, res.Timings)
	}
	if rc, ok := r.t.(*rawConn); !ok || rc.fast == nil {
		t.Errorf("transport %T: the https request did not go over fasthttp", r.t)
	}
}

// THROTTLE_TRANSPORT=fasthttp keeps a raw lane on fasthttp; a bad value is
// refused.
func TestRawTransportEnv(t *testing.T) {
	t.Setenv(TransportEnv, TransportFastHTTP)
	d, err := NewDriver(DriverConfig{Meter: NewMeter(), RawHTTP: true})
	if err != nil || d.Transport() != TransportFastHTTP {
		t.Fatalf("%v, %v", d, err)
	}
	t.Setenv(TransportEnv, "gnet")
	if _, err := NewDriver(DriverConfig{Meter: NewMeter(), RawHTTP: true}); err == nil || !strings.Contains(err.Error(), TransportEnv) {
		t.Errorf("an unknown transport: %v", err)
	}
	if _, err := LaneTransport(false); err == nil || !strings.Contains(err.Error(), TransportEnv) {
		t.Errorf("LaneTransport, an unknown transport: %v", err)
	}
	t.Setenv(TransportEnv, "")
	if d, _ := NewDriver(DriverConfig{Meter: NewMeter(), RawHTTP: true, HTTP2: true}); d.Transport() != TransportNetHTTP {
		t.Errorf("--http2: %s", d.Transport())
	}
	// LaneTransport (a script run's report) names what a lane's driver uses.
	for _, env := range []string{"", TransportFastHTTP, TransportEvLoop} {
		t.Setenv(TransportEnv, env)
		for _, http2 := range []bool{false, true} {
			d, err := NewDriver(DriverConfig{Meter: NewMeter(), RawHTTP: true, HTTP2: http2})
			if err != nil {
				t.Fatal(err)
			}
			if name, err := LaneTransport(http2); err != nil || name != d.Transport() {
				t.Errorf("%s=%q, http2 %v: LaneTransport %q (%v), the driver's %q", TransportEnv, env, http2, name, err, d.Transport())
			}
			d.Close()
		}
	}
}

// A Go panic in a raw lane's attempt fails it, class other, and the
// lane's transport is replaced by a new raw one, which sends the next.
func TestRawPanicReplacesTransport(t *testing.T) {
	s := newRawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true))
	r := lane(t, true, DriverConfig{})
	var res Response
	r.Iterate(&Request{URL: s.url + "/"}, time.Time{}, &res)
	old := r.t
	attemptHook = func(*Request) { panic("boom") }
	r.Iterate(&Request{URL: s.url + "/"}, time.Time{}, &res)
	attemptHook = nil
	if _, ok := res.Err.(*HostPanic); !ok || res.Class != ClassOther {
		t.Fatalf("%v %v", res.Err, res.Class)
	}
	if nt, ok := r.t.(*rawConn); !ok || nt == old {
		t.Fatalf("transport %T not replaced", r.t)
	}
	if r.Iterate(&Request{URL: s.url + "/"}, time.Time{}, &res) != IterationOK {
		t.Fatal(res.Err)
	}
	if _, conns := s.stats(); conns != 2 {
		t.Errorf("%d connections, want the old one closed and a new one", conns)
	}
}

// A connection idle longer than fasthttp's MaxIdleConnDuration is not
// reused: the lane dials afresh.
func TestRawIdleLimit(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true))
	r := lane(t, true, DriverConfig{})
	req := Request{URL: s.url + "/"}
	var res Response
	for i := range 3 {
		if i == 2 {
			r.t.(*rawConn).hosts[0].idle = time.Now().Add(-rawMaxIdle - time.Second)
		}
		if r.Iterate(&req, time.Time{}, &res) != IterationOK {
			t.Fatal(res.Err)
		}
	}
	if _, conns := s.stats(); conns != 2 {
		t.Errorf("%d connections, want 2: the third request after the idle limit redials", conns)
	}
}
