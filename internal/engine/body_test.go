package engine

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// endless writes a body that never ends (chunked) or claims 1 TiB
// (Content-Length) and sends it as fast as the client reads, until the
// client goes away. 1 TiB, not 2 GiB: a quiet machine read 2 GiB over
// loopback inside the 1 s timeout, and the attempt then ended ok.
func endless(t *testing.T) string {
	t.Helper()
	chunk := make([]byte, 32<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/huge" {
			w.Header().Set("Content-Length", strconv.Itoa(1<<40))
		}
		if r.URL.Path == "/small" {
			w.Write(chunk[:100])
			return
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A discarded endless or huge body is read and dropped until the timeout
// ends the attempt (class timeout, on time), its bytes counted; a kept one
// stops at the body limit with ErrBodyTooLarge and its own code; a small
// kept body is whole.
func TestBodyStreamedAndBounded(t *testing.T) {
	t.Parallel()
	base := endless(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/endless", "/huge"} {
				// Long enough for a descheduled client or server on a
				// loaded machine to move 64 KiB (300 ms read none at
				// load 11-14).
				timeout := time.Second
				res, out := once(driver(t, DriverConfig{HTTP2: tr.http2, Timeout: timeout}), &Request{URL: base + path, DiscardBody: true})
				if out != IterationFailed || res.Class != ClassTimeout || res.ErrorCode != ErrorTimeout {
					t.Errorf("%s discarded: outcome %v class %v code %d err %v", path, out, res.Class, res.ErrorCode, res.Err)
				}
				// Without a deadline on the body the attempt would never
				// end; 20 timeouts is slack for a loaded machine.
				if res.Elapsed > 20*timeout {
					t.Errorf("%s discarded: the attempt took %v past its timeout %v", path, res.Elapsed, timeout)
				}
				if res.BytesReceived < 64<<10 {
					t.Errorf("%s discarded: %d bytes counted, want the body's bytes", path, res.BytesReceived)
				}

				res, out = once(driver(t, DriverConfig{HTTP2: tr.http2, Timeout: 10 * time.Second, BodyLimit: 1 << 20}), &Request{URL: base + path})
				if out != IterationFailed || !errors.Is(res.Err, ErrBodyTooLarge) || res.ErrorCode != ErrorBodyTooLarge || res.Class != ClassOther || res.Body != nil {
					t.Errorf("%s kept: outcome %v class %v code %d err %v body %d bytes", path, out, res.Class, res.ErrorCode, res.Err, len(res.Body))
				}
			}
			res, out := once(driver(t, DriverConfig{HTTP2: tr.http2, BodyLimit: 100}), &Request{URL: base + "/small"})
			if out != IterationOK || len(res.Body) != 100 {
				t.Errorf("a body of exactly the limit: outcome %v err %v body %d bytes", out, res.Err, len(res.Body))
			}
		})
	}
}

// A host under the reserved .invalid TLD never resolves (RFC 6761): class
// dns, k6's code 1100, a failure under the default rule.
func TestDNSClass(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			res, out := once(driver(t, DriverConfig{HTTP2: tr.http2, Timeout: 5 * time.Second}), &Request{URL: "http://no-such-host.invalid/"})
			if out != IterationFailed || res.Class != ClassDNS || res.ErrorCode != ErrorDNS {
				t.Errorf("outcome %v class %v code %d err %v", out, res.Class, res.ErrorCode, res.Err)
			}
		})
	}
}

// A server that does not speak TLS, or hangs up in the handshake, fails
// the attempt with class tls.
func TestTLSClass(t *testing.T) {
	t.Parallel()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(plain.Close)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			res, out := once(driver(t, DriverConfig{HTTP2: tr.http2, Timeout: 5 * time.Second}), &Request{URL: "https://" + plain.Listener.Addr().String() + "/"})
			if out != IterationFailed || res.Class != ClassTLS || res.ErrorCode != ErrorTLS {
				t.Errorf("outcome %v class %v code %d err %v", out, res.Class, res.ErrorCode, res.Err)
			}
		})
	}
}

func TestParseFailOnDNSTLS(t *testing.T) {
	f, err := ParseFailOn("dns")
	if err != nil || !f.failedClass(ClassDNS) || f.failedClass(ClassTLS) {
		t.Fatalf("dns: %v %+v", err, f)
	}
	f, _ = ParseFailOn("transport")
	if !f.failedClass(ClassDNS) || !f.failedClass(ClassTLS) {
		t.Fatalf("transport covers dns and tls")
	}
}

// Unreachable (governor.Load.Unreachable) counts refusals and names that
// do not resolve, never an answer: a 503 is the target shedding, not out.
func TestUnreachableCounted(t *testing.T) {
	t.Parallel()
	shed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	t.Cleanup(shed.Close)
	for _, tr := range transports {
		m := NewMeter()
		d := driver(t, DriverConfig{Meter: m, HTTP2: tr.http2, Timeout: 5 * time.Second})
		once(d, &Request{URL: refusedURL(t)})
		once(d, &Request{URL: "http://outage.invalid/"})
		once(d, &Request{URL: shed.URL})
		if ld, c := m.Load(), m.Counts(); ld.Unreachable != 2 || c.Failed != 3 {
			t.Errorf("%s: unreachable %d of %d failed, want 2 of 3 (refused, dns; not the 503)", tr.name, ld.Unreachable, c.Failed)
		}
	}
}
