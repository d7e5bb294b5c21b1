package script

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"
)

// Request is one HTTP attempt a script makes.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Timeout bounds the attempt, from sending to the last body byte.
	Timeout time.Duration
	// Redirects is how many redirects to follow (0: none).
	Redirects int
	// Discard drops the body (responseType "none").
	Discard bool
}

// Result is what one attempt got. Err is a transport error (then Status is
// 0); TimedOut says the attempt outlived its timeout.
type Result struct {
	Status   int
	Proto    string
	Header   http.Header
	Body     []byte
	URL      string
	Err      error
	TimedOut bool
	// Start is when the attempt was sent; Waiting is the time to the
	// response's headers, Receiving the time reading the body.
	Start              time.Time
	Waiting, Receiving time.Duration
}

// Duration is the attempt's total time.
func (r *Result) Duration() time.Duration { return r.Waiting + r.Receiving }

// Transport sends script attempts. It is the seam to the engine's attempt
// runner: a script's requests go through it and nothing else, and the VU
// counts each into its phase's attempt plane. It must be safe for
// concurrent use; each VU calls it from its own goroutine.
type Transport interface {
	Do(ctx context.Context, req *Request, res *Result)
	// CloseIdle releases pooled connections at the end of a run.
	CloseIdle()
}

// NetHTTP is the net/http Transport: pooled keep-alive connections, one
// idle connection kept per VU so that connections are reused.
type NetHTTP struct {
	rt      *http.Transport
	clients [maxRedirectsCached + 1]*http.Client
}

// maxRedirectsCached bounds the prepared clients, one per redirect limit;
// larger limits build their client per request.
const maxRedirectsCached = 16

// NewNetHTTP returns a transport sized for vus concurrent VUs.
func NewNetHTTP(vus int, insecure bool) *NetHTTP {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := &NetHTTP{rt: &http.Transport{
		Proxy:               nil, // load goes straight to the target
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: vus + 16,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // only with --insecure
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
	}}
	for i := range t.clients {
		t.clients[i] = t.client(i)
	}
	return t
}

func (t *NetHTTP) client(redirects int) *http.Client {
	return &http.Client{Transport: t.rt, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if len(via) > redirects {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// Do sends req and reads the whole response.
func (t *NetHTTP) Do(ctx context.Context, req *Request, res *Result) {
	*res = Result{Start: time.Now(), URL: req.URL}
	ctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, body)
	if err != nil {
		res.Err = err
		return
	}
	if req.Header != nil {
		hr.Header = req.Header
		if h := req.Header.Get("Host"); h != "" {
			hr.Host = h
		}
	}
	c := t.clients[0]
	if req.Redirects >= 0 && req.Redirects <= maxRedirectsCached {
		c = t.clients[req.Redirects]
	} else {
		c = t.client(req.Redirects)
	}
	resp, err := c.Do(hr)
	res.Waiting = time.Since(res.Start)
	if err != nil {
		res.Err, res.TimedOut = err, ctx.Err() == context.DeadlineExceeded
		return
	}
	res.Status, res.Proto, res.Header, res.URL = resp.StatusCode, resp.Proto, resp.Header, resp.Request.URL.String()
	if req.Discard {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		res.Body, err = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	res.Receiving = time.Since(res.Start) - res.Waiting
	if err != nil {
		res.Err, res.TimedOut = err, ctx.Err() == context.DeadlineExceeded
	}
}

// CloseIdle closes the pooled connections.
func (t *NetHTTP) CloseIdle() { t.rt.CloseIdleConnections() }

// errorCode is k6's documented error_code for a failed attempt: 1050 a
// timeout, 1020 an invalid URL, 1200 a TCP error (refused, reset), 1000 any
// other transport error, 1000+status for a 4xx or 5xx response, 0 none.
func errorCode(res *Result) int {
	switch {
	case res.Err == nil && res.Status >= 400 && res.Status < 600:
		return 1000 + res.Status
	case res.Err == nil:
		return 0
	case res.TimedOut || errors.Is(res.Err, context.DeadlineExceeded) || errors.Is(res.Err, os.ErrDeadlineExceeded):
		return 1050
	}
	var ue *url.Error
	if errors.As(res.Err, &ue) && (ue.Op == "parse" || errors.Is(res.Err, errBadURL)) {
		return 1020
	}
	if errors.Is(res.Err, syscall.ECONNREFUSED) || errors.Is(res.Err, syscall.ECONNRESET) || errors.Is(res.Err, syscall.EPIPE) || errors.Is(res.Err, io.EOF) {
		return 1200
	}
	return 1000
}

var errBadURL = errors.New("invalid URL")
