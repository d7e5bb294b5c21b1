package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// stdTransport is the net/http transport (--http2): HTTP/2 where the server
// offers it over TLS, HTTP/1.1 otherwise. Unlike fasthttp's runners it is
// shared by every runner of a driver (one pool of connections, multiplexed
// over HTTP/2), so attempts are timed with httptrace rather than on an owned
// connection, and their bytes are the request's and response's sizes.
type stdTransport struct {
	t         *http.Transport
	abort     context.Context
	bodyLimit int64
}

func newStdTransport(cfg DriverConfig) *stdTransport {
	d := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second, Resolver: cfg.Resolver}
	return &stdTransport{abort: cfg.Abort, bodyLimit: cfg.BodyLimit, t: &http.Transport{
		// Load goes straight to the target: a proxy from the environment
		// would measure the proxy.
		Proxy:       nil,
		DialContext: d.DialContext,
		// Every worker keeps its connection between requests: without
		// enough idle slots connections churn and the run measures TCP setup.
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   cfg.Conns + 16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: cfg.Insecure}, //nolint:gosec // only with --insecure
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
		ExpectContinueTimeout: time.Second,
	}}
}

// stdTrace is one attempt's httptrace marks. net/http may call the hooks
// from its dialling goroutine, even after RoundTrip returned: mu guards
// them.
type stdTrace struct {
	mu                                                                   sync.Mutex
	start, gotConn, connStart, connDone, tlsStart, tlsDone, wrote, first time.Time
}

// mark sets *at to now.
func (tr *stdTrace) mark(at *time.Time) {
	now := time.Now()
	tr.mu.Lock()
	*at = now
	tr.mu.Unlock()
}

func (s *stdTransport) send(r *Request, now time.Time, timeout time.Duration, res *Response) time.Time {
	res.location = ""
	ctx, cancel := context.WithTimeout(s.abort, timeout)
	defer cancel()
	var tr stdTrace
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { tr.mark(&tr.gotConn) },
		ConnectStart:         func(string, string) { tr.mark(&tr.connStart) },
		ConnectDone:          func(string, string, error) { tr.mark(&tr.connDone) },
		TLSHandshakeStart:    func() { tr.mark(&tr.tlsStart) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { tr.mark(&tr.tlsDone) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { tr.mark(&tr.wrote) },
		GotFirstResponseByte: func() { tr.mark(&tr.first) },
	})
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, body)
	if err != nil {
		res.Err = err
		return time.Now()
	}
	if req.URL.Host == "" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		res.Err = errInvalidURL
		return time.Now()
	}
	if r.Header != nil {
		req.Header = r.Header.Clone()
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	if r.Host != "" {
		req.Host = r.Host
	}
	tr.mark(&tr.start)
	resp, err := s.t.RoundTrip(req)
	var b []byte
	if err == nil {
		// Read the body to its end so the connection goes back to the pool;
		// the attempt ends at its last byte.
		if r.DiscardBody {
			var n int64
			n, err = io.Copy(io.Discard, resp.Body)
			res.BytesReceived += n
		} else {
			b, err = keepBody(resp.Body, s.bodyLimit)
			res.BytesReceived += int64(len(b))
		}
		resp.Body.Close()
	}
	end := time.Now()
	res.BytesSent += int64(len(r.Body))
	res.Timings = tr.timings(end)
	if err != nil {
		res.Err = err
		return end
	}
	res.Status, res.Proto = resp.StatusCode, resp.Proto
	if isRedirect(res.Status) {
		res.location = resp.Header.Get("Location")
	}
	if !r.DiscardBody || r.KeepHeader {
		res.Header, res.Body = resp.Header, b
	}
	return end
}

// timings turns the trace's marks into the attempt's phases.
func (tr *stdTrace) timings(end time.Time) Timings {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var t Timings
	if !tr.connStart.IsZero() && !tr.connDone.IsZero() {
		t.Connecting = tr.connDone.Sub(tr.connStart)
	}
	if !tr.tlsStart.IsZero() && !tr.tlsDone.IsZero() {
		t.TLSHandshaking = tr.tlsDone.Sub(tr.tlsStart)
	}
	got := tr.gotConn
	if got.IsZero() {
		got = end
	}
	t.Blocked = max(got.Sub(tr.start)-t.Connecting-t.TLSHandshaking, 0)
	t.split(got, tr.wrote, tr.first, end)
	return t
}

func (s *stdTransport) close() { s.t.CloseIdleConnections() }
