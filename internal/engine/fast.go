package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// The default HTTP/1.1 transport, on fasthttp. Every Runner has its own
// fastConn: one fasthttp.HostClient per host it sends to, each holding at
// most one keep-alive connection, so a phase's connections are sized to its
// workers and a runner never waits for or shares a connection. Owning the
// connection is also what lets it be timed: the runner's dial function wraps
// it in a tracedConn that notes when the request's last byte was written and
// the response's first byte read, on the runner's goroutine only. The wire
// request and response are fasthttp's own, acquired once per runner from
// fasthttp's pools and reused for every attempt; the request is rebuilt
// only when the runner is handed a different *Request than last time.

// fastShared is what every fasthttp runner of a driver shares (read-only).
type fastShared struct {
	// insecure skips certificate checks; each https host's tls.Config is
	// made when the runner first sends to it (a VU's lane that never
	// does holds none: a config per driver was 0.5 KiB per VU).
	insecure  bool
	abort     context.Context
	bodyLimit int64
	resolver  *net.Resolver
	bufs      *bufPools // every runner's connection buffers (bufpool.go)
	rxStamp   bool      // the raw transport stamps its reads (rxStampOn)
}

func newFastShared(cfg DriverConfig) *fastShared {
	bufs := &bufPools{}
	if cfg.Buffers != nil {
		bufs = &cfg.Buffers.p
	}
	return &fastShared{
		insecure:  cfg.Insecure,
		abort:     cfg.Abort,
		bodyLimit: cfg.BodyLimit,
		resolver:  cfg.Resolver,
		bufs:      bufs,
		rxStamp:   rxStampOn(),
	}
}

// fastConn is one runner's fasthttp transport.
type fastConn struct {
	s        *fastShared
	hosts    [2]map[string]*fastHost // by host:port, [0] http, [1] https
	last     *Request                // the Request req was built from
	lastHost *fastHost
	req      *fasthttp.Request
	resp     *fasthttp.Response
	scratch  []byte // keepHeader's
}

func (s *fastShared) newConn() *fastConn {
	return &fastConn{s: s, req: fasthttp.AcquireRequest(), resp: fasthttp.AcquireResponse()}
}

// fastHost is one host of a runner: its HostClient and the trace of the
// attempt in progress, written by the tracedConn and the dial function on
// the runner's goroutine.
type fastHost struct {
	hc       *fasthttp.HostClient
	s        *fastShared
	tls      *tls.Config // nil for http
	deadline time.Time   // the attempt's, for dialling

	dialed          bool // a connection was dialled during this attempt
	connect, tlsDur time.Duration
	wrote, first    time.Time // last byte written, first byte read
	sent, recv      int64
}

func (c *fastConn) host(isTLS bool, addr string) *fastHost {
	i := 0
	if isTLS {
		i = 1
	}
	if h := c.hosts[i][addr]; h != nil {
		return h
	}
	if c.hosts[i] == nil {
		c.hosts[i] = map[string]*fastHost{}
	}
	h := &fastHost{s: c.s}
	if isTLS {
		name, _, err := net.SplitHostPort(addr)
		if err != nil {
			name = addr
		}
		h.tls = &tls.Config{
			InsecureSkipVerify: c.s.insecure, //nolint:gosec // only with --insecure
			NextProtos:         []string{"http/1.1"},
			ServerName:         name,
		}
	}
	h.hc = &fasthttp.HostClient{
		Addr:  addr,
		IsTLS: isTLS,
		Name:  "throttle",
		Dial:  h.dial,
		// One connection per runner and host: the runner is its only user.
		MaxConns:            1,
		MaxIdleConnDuration: 90 * time.Second,
		// Response headers must fit the read buffer (fasthttp's default is
		// 4 KiB); 16 KiB takes cookie-heavy answers at 16 MiB per 1000
		// workers. Larger headers fail the attempt (class other): use
		// --http2 (net/http) for such a target.
		ReadBufferSize: 16 << 10,
		// Send the path as given, as net/http does.
		DisablePathNormalizing: true,
		// Bodies are read by send, as a stream: discarded as they arrive
		// or kept up to the body limit, so an endless or huge body costs a
		// buffer, not its size. The attempt's deadline (tracedConn) stays
		// on the connection while the stream is read, so the timeout ends
		// a slow body too.
		StreamResponseBody: true,
		// fasthttp's own retries would hide attempts; only a request on a
		// reused keep-alive connection the server had already closed is
		// sent again (net/http does the same).
		RetryIfErr: h.retry,
	}
	c.s.bufs.sharePools(h.hc)
	c.hosts[i][addr] = h
	return h
}

// retry allows one resend of an idempotent request whose reused connection
// turned out to be closed by the server.
func (h *fastHost) retry(req *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	idempotent := req.Header.IsGet() || req.Header.IsHead() || req.Header.IsPut() || req.Header.IsDelete() || req.Header.IsOptions()
	closed := errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	return false, attempts == 1 && !h.dialed && idempotent && closed
}

// dial connects (and for https, shakes hands) within the attempt's
// deadline, timing both; the abort context closes the connection.
func (h *fastHost) dial(addr string) (net.Conn, error) {
	t0 := time.Now()
	d := net.Dialer{Deadline: h.deadline, KeepAlive: 30 * time.Second, Resolver: h.s.resolver}
	raw, err := d.DialContext(h.s.abort, "tcp", addr)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	h.dialed, h.connect, h.tlsDur = true, t1.Sub(t0), 0
	tc := &tracedConn{Conn: raw, h: h}
	tc.stop = context.AfterFunc(h.s.abort, func() { raw.Close() })
	if h.tls == nil {
		return tc, nil
	}
	tl := tls.Client(tc, h.tls)
	// The attempt's deadline bounds the handshake and stays for its
	// request (tracedConn.Write sees it set).
	raw.SetDeadline(h.deadline)
	tc.dl = h.deadline
	if err := tl.HandshakeContext(h.s.abort); err != nil {
		tc.Close()
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() || h.s.abort.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", errTLSHandshake, err)
	}
	h.tlsDur = time.Since(t1)
	h.wrote, h.first = time.Time{}, time.Time{} // the handshake is not the request
	return tl, nil
}

// tracedConn counts a connection's bytes and notes, for the attempt in
// progress, when the last byte was written and the first one read. It
// also puts the attempt's deadline on the connection, once per attempt,
// at its first write (a request is always written before its answer is
// read): one SetDeadline, where fasthttp, given the request's timeout,
// would read the clock three times and set the write and the read
// deadline apart — two updates of the runtime's timers per request
// (docs/performance.md, session 11). The deadline stays on the connection
// while the body stream is read, so the timeout ends a slow body too.
type tracedConn struct {
	net.Conn
	h    *fastHost
	stop func() bool // unregisters the abort hook
	dl   time.Time   // the deadline on the connection now
}

func (c *tracedConn) Write(p []byte) (int, error) {
	if d := c.h.deadline; !d.Equal(c.dl) {
		if err := c.Conn.SetDeadline(d); err != nil {
			return 0, err
		}
		c.dl = d
	}
	n, err := c.Conn.Write(p)
	c.h.sent += int64(n)
	c.h.wrote = time.Now()
	return n, err
}

func (c *tracedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.h.recv += int64(n)
		if c.h.first.IsZero() {
			c.h.first = time.Now()
		}
	}
	return n, err
}

// SetDeadline, SetReadDeadline and SetWriteDeadline ignore a clear: fasthttp, given
// no timeout, clears a new connection's deadlines once, before its first
// answer is read — which would lift the attempt's deadline that Write had
// just set. A deadline set by anyone else is passed on, and the next
// attempt's Write sets its own again.
func (c *tracedConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	c.dl = time.Time{}
	return c.Conn.SetReadDeadline(t)
}

func (c *tracedConn) SetDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	c.dl = time.Time{}
	return c.Conn.SetDeadline(t)
}

func (c *tracedConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	c.dl = time.Time{}
	return c.Conn.SetWriteDeadline(t)
}

func (c *tracedConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// build makes the wire request from r.
func (c *fastConn) build(r *Request) (*fastHost, error) {
	isTLS, addr, err := buildRequest(c.req, r)
	if err != nil {
		return nil, err
	}
	return c.host(isTLS, addr), nil
}

// buildRequest makes req, fasthttp's wire request, from r, and returns
// whether it goes over TLS and the address (host:port) it goes to. The raw
// transport builds its requests here too, so both send the same bytes.
func buildRequest(req *fasthttp.Request, r *Request) (isTLS bool, addr string, err error) {
	req.Reset()
	req.Header.DisableNormalizing()
	// No Content-Type the request has not got: net/http (k6's client, and
	// the --http2 transport) adds none to a body, where fasthttp would add
	// application/octet-stream.
	req.Header.SetNoDefaultContentType(true)
	req.SetRequestURI(r.URL)
	uri := req.URI()
	switch {
	case bytes.Equal(uri.Scheme(), []byte("http")):
	case bytes.Equal(uri.Scheme(), []byte("https")):
		isTLS = true
	default:
		return false, "", errInvalidURL
	}
	if len(uri.Host()) == 0 {
		return false, "", errInvalidURL
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req.Header.SetMethod(method)
	host := r.Host
	for k, vs := range r.Header {
		if http.CanonicalHeaderKey(k) == "Host" {
			if host == "" && len(vs) > 0 {
				host = vs[0]
			}
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if host != "" {
		req.UseHostHeader = true
		req.Header.SetHost(host)
	}
	if r.Body != nil {
		req.SetBodyRaw(r.Body)
	}
	return isTLS, fasthttp.AddMissingPort(string(uri.Host()), isTLS), nil
}

func (c *fastConn) send(r *Request, t0 time.Time, timeout time.Duration, res *Response) time.Time {
	h := c.lastHost
	if r != c.last || h == nil {
		var err error
		c.last, c.lastHost = nil, nil
		if h, err = c.build(r); err != nil {
			res.Err = err
			return t0
		}
		c.last, c.lastHost = r, h
	}
	h.deadline = t0.Add(timeout)
	h.dialed, h.wrote, h.first, h.sent, h.recv = false, time.Time{}, time.Time{}, 0, 0
	resp := c.resp
	resp.Reset()
	resp.Header.SetNoDefaultContentType(true) // keepHeader's: only a Content-Type sent
	// No SetTimeout: the deadline h.deadline is put on the connection by
	// its tracedConn (and bounds the dial); fasthttp sets none.
	err := h.hc.Do(c.req, resp)
	var body []byte
	if err == nil {
		body, err = c.readBody(r, resp)
	}
	end := time.Now()
	if err != nil && !end.Before(h.deadline) && errClass(err) == ClassOther {
		// fasthttp's chunked reader flattens the deadline's error into
		// text ("cannot read '\r' char at the end of chunk size: ... i/o
		// timeout"): past the deadline it is the timeout all the same.
		err = fmt.Errorf("%w: %v", errBodyTimeout, err)
	}

	res.BytesSent += h.sent
	res.BytesReceived += h.recv
	res.Timings = h.timings(t0, end)
	res.location = ""
	if err != nil {
		res.Err = err
		return end
	}
	res.Status = resp.StatusCode()
	res.Proto = "HTTP/1.1"
	if bytes.Equal(resp.Header.Protocol(), []byte("HTTP/1.0")) {
		res.Proto = "HTTP/1.0"
	}
	if isRedirect(res.Status) {
		res.location = string(resp.Header.Peek("Location"))
	}
	if !r.DiscardBody || r.KeepHeader {
		// Made into Header when asked (Response.Headers).
		res.rawHeader, c.scratch = keepHeader(&resp.Header, c.scratch)
		res.Body = body
	}
	return end
}

// readBody reads the response's body stream to its end: discarded as it
// arrives when r discards it, else kept up to the body limit
// (ErrBodyTooLarge past it, without reading further). The stream is always
// closed: a body not read to its end closes the connection.
func (c *fastConn) readBody(r *Request, resp *fasthttp.Response) ([]byte, error) {
	stream := resp.BodyStream()
	if stream == nil { // no body (HEAD, 204, 304)
		if r.DiscardBody || len(resp.Body()) == 0 {
			return nil, nil
		}
		if b := resp.Body(); int64(len(b)) <= c.s.bodyLimit {
			return append([]byte(nil), b...), nil // exactly its size
		}
		return keepBody(bytes.NewReader(resp.Body()), c.s.bodyLimit)
	}
	defer resp.CloseBodyStream()
	if r.DiscardBody {
		_, err := io.Copy(io.Discard, stream)
		return nil, err
	}
	if n := int64(resp.Header.ContentLength()); n >= 0 && n <= c.s.bodyLimit {
		// The announced length: one buffer of that size, not io.ReadAll's
		// 512 bytes and doublings (most of a small answer's garbage).
		b := make([]byte, n)
		if _, err := io.ReadFull(stream, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return keepBody(stream, c.s.bodyLimit)
}

// timings splits the attempt [t0, end] at the trace's marks.
func (h *fastHost) timings(t0, end time.Time) Timings {
	var t Timings
	sendStart := t0
	if h.dialed {
		t.Connecting, t.TLSHandshaking = h.connect, h.tlsDur
		sendStart = sendStart.Add(h.connect + h.tlsDur)
	}
	t.split(sendStart, h.wrote, h.first, end)
	return t
}

func (c *fastConn) close() {
	for _, m := range c.hosts {
		for _, h := range m {
			h.hc.CloseIdleConnections()
		}
	}
	fasthttp.ReleaseRequest(c.req)
	fasthttp.ReleaseResponse(c.resp)
	c.req, c.resp = nil, nil
}
