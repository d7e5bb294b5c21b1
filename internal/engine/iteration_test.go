package engine

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testdns"
	"github.com/throttlekit/throttle/internal/testwait"
)

// transports are the two the table runs against.
var transports = []struct {
	name  string
	http2 bool
}{{"fasthttp", false}, {"net/http", true}}

// table is a loopback server with one path per case.
func table(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", "yes")
		io.WriteString(w, "hello")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.Method+" "+r.Host+" "+r.Header.Get("X-T")+" "+string(b))
	})
	for _, code := range []int{404, 418, 429, 503} {
		mux.HandleFunc("/status/"+strconv.Itoa(code), func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
	}
	mux.HandleFunc("/big-header", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("x", 8<<10)) // past fasthttp's default 4 KiB buffer
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) { time.Sleep(50 * time.Millisecond) })
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/see-other", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo", http.StatusSeeOther) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// refusedURL is a loopback address nothing listens on.
func refusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

func driver(t *testing.T, cfg DriverConfig) *Driver {
	t.Helper()
	if cfg.Meter == nil {
		cfg.Meter = NewMeter()
	}
	if cfg.Resolver == nil {
		cfg.Resolver = testdns.Resolver(t) // a name never sends a query off the machine
	}
	d, err := NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// once runs one iteration of req on a fresh runner of d.
func once(d *Driver, req *Request) (Response, Outcome) {
	r := d.Runner()
	defer r.Close()
	var res Response
	out := r.Iterate(req, time.Time{}, &res)
	return res, out
}

// The same table runs against both transports: one classification serves
// them.
func TestIterateTable(t *testing.T) {
	t.Parallel()
	base := table(t)
	refused := refusedURL(t)
	teapot, _ := ParseFailOn("418")
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				name    string
				cfg     DriverConfig
				req     Request
				status  int
				class   Class
				failed  bool
				code    int
				checkFn func(t *testing.T, res Response)
			}{
				{name: "ok", req: Request{URL: base + "/ok"}, status: 200, checkFn: func(t *testing.T, res Response) {
					if string(res.Body) != "hello" || res.Headers().Get("X-Seen") != "yes" || !strings.HasPrefix(res.Proto, "HTTP/1.") {
						t.Errorf("body %q, header %v, proto %q", res.Body, res.Headers(), res.Proto)
					}
					if res.BytesReceived < 5 || res.Timings.Duration <= 0 || res.Timings.TTFB() <= 0 || res.Elapsed < res.Timings.Duration {
						t.Errorf("bytes %d, timings %+v, elapsed %v", res.BytesReceived, res.Timings, res.Elapsed)
					}
				}},
				{name: "discard", req: Request{URL: base + "/ok", DiscardBody: true}, status: 200, checkFn: func(t *testing.T, res Response) {
					if res.Body != nil || res.Headers() != nil {
						t.Errorf("kept body %q header %v", res.Body, res.Headers())
					}
				}},
				{name: "echo", req: Request{Method: "POST", URL: base + "/echo", Header: http.Header{"X-T": {"7"}}, Host: "example.test", Body: []byte("data")}, status: 200,
					checkFn: func(t *testing.T, res Response) {
						if string(res.Body) != "POST example.test 7 data" {
							t.Errorf("echo %q", res.Body)
						}
						if res.BytesSent < 4 {
							t.Errorf("sent %d bytes", res.BytesSent)
						}
					}},
				{name: "host header", req: Request{URL: base + "/echo", Header: http.Header{"Host": {"h.test"}}}, status: 200, checkFn: func(t *testing.T, res Response) {
					if string(res.Body) != "GET h.test  " {
						t.Errorf("echo %q", res.Body)
					}
				}},
				{name: "an 8 KiB header", req: Request{URL: base + "/big-header"}, status: 200, checkFn: func(t *testing.T, res Response) {
					if len(res.Headers().Get("X-Big")) != 8<<10 {
						t.Errorf("header of %d bytes", len(res.Headers().Get("X-Big")))
					}
				}},
				{name: "404 is ok by default", req: Request{URL: base + "/status/404"}, status: 404, code: 1404},
				{name: "503", req: Request{URL: base + "/status/503"}, status: 503, class: Class5xx, failed: true, code: 1503},
				{name: "429", req: Request{URL: base + "/status/429"}, status: 429, class: Class429, failed: true, code: 1429},
				{name: "418 by rule", cfg: DriverConfig{FailOn: &teapot}, req: Request{URL: base + "/status/418"}, status: 418, class: ClassOther, failed: true, code: 1418},
				{name: "timeout", req: Request{URL: base + "/hang", Timeout: 50 * time.Millisecond}, class: ClassTimeout, failed: true, code: ErrorTimeout},
				{name: "refused", req: Request{URL: refused}, class: ClassRefused, failed: true, code: ErrorRefused},
				{name: "reset", req: Request{URL: base + "/reset"}, class: ClassReset, failed: true, code: ErrorReset},
				{name: "invalid URL", req: Request{URL: "ftp://127.0.0.1/"}, class: ClassOther, failed: true, code: ErrorInvalidURL},
				{name: "redirect not followed", req: Request{URL: base + "/redirect"}, status: 302},
				{name: "redirect followed", req: Request{URL: base + "/redirect", Redirects: 3}, status: 200, checkFn: func(t *testing.T, res Response) {
					if !strings.HasSuffix(res.URL, "/ok") || string(res.Body) != "hello" {
						t.Errorf("url %s body %q", res.URL, res.Body)
					}
				}},
				{name: "303 turns POST to GET", req: Request{Method: "POST", URL: base + "/see-other", Body: []byte("x"), Redirects: 1}, status: 200, checkFn: func(t *testing.T, res Response) {
					if !strings.HasPrefix(string(res.Body), "GET ") {
						t.Errorf("after a 303: %q", res.Body)
					}
				}},
				{name: "slow", cfg: DriverConfig{Slow: time.Millisecond}, req: Request{URL: base + "/sleep"}, status: 200, class: ClassSlow, failed: true},
				{name: "within budget", cfg: DriverConfig{Slow: time.Minute}, req: Request{URL: base + "/ok"}, status: 200},
				{name: "slow never hides a 5xx", cfg: DriverConfig{Slow: time.Nanosecond}, req: Request{URL: base + "/status/503"}, status: 503, class: Class5xx, failed: true, code: 1503},
				{name: "custom failed", cfg: DriverConfig{Failed: func(r *Response) bool { return r.Status != 404 }}, req: Request{URL: base + "/ok"}, status: 200, class: ClassOther, failed: true},
				{name: "custom ok", cfg: DriverConfig{Failed: func(r *Response) bool { return false }}, req: Request{URL: base + "/status/503"}, status: 503, code: 1503},
			} {
				t.Run(c.name, func(t *testing.T) {
					cfg := c.cfg
					cfg.HTTP2 = tr.http2
					m := NewMeter()
					cfg.Meter = m
					res, out := once(driver(t, cfg), &c.req)
					if res.Status != c.status || res.Class != c.class || res.Failed != c.failed || res.ErrorCode != c.code {
						t.Errorf("status %d class %v failed %v code %d (err %v), want %d %v %v %d",
							res.Status, res.Class, res.Failed, res.ErrorCode, res.Err, c.status, c.class, c.failed, c.code)
					}
					if (out == IterationFailed) != c.failed || out == IterationAborted {
						t.Errorf("outcome %v, failed %v", out, c.failed)
					}
					cnt := m.Counts()
					if cnt.Started != 1 || cnt.Classes[c.class] != 1 || cnt.OK+cnt.Failed != 1 {
						t.Errorf("meter %+v", cnt)
					}
					if c.checkFn != nil {
						c.checkFn(t, res)
					}
				})
			}
		})
	}
}

// Tries: every attempt is counted, the response is the last one's, and the
// Meter's Load sees them all.
func TestIterateTries(t *testing.T) {
	t.Parallel()
	base := table(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			m := NewMeter()
			d := driver(t, DriverConfig{Meter: m, Tries: 3, HTTP2: tr.http2})
			res, out := once(d, &Request{URL: base + "/status/503"})
			if out != IterationFailed || res.Tries != 3 || res.Class != Class5xx {
				t.Errorf("outcome %v, tries %d, class %v", out, res.Tries, res.Class)
			}
			m.EndIteration(out)
			ok, failed := m.Attempts()
			l := m.Load()
			if ok != 0 || failed != 3 || l.Started != 3 || l.Latency <= 0 || l.Dropped != 0 || l.GeneratorSaturated {
				t.Errorf("attempts %d/%d, load %+v", ok, failed, l)
			}
			if c := m.Counts(); c.IterFailed != 1 || c.IterOK != 0 {
				t.Errorf("iterations %+v", c)
			}
		})
	}
}

// A runner sends the same Request again on its kept connection; a new
// Request after it is built afresh.
func TestRunnerReuse(t *testing.T) {
	t.Parallel()
	conns := make(chan struct{}, 100)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	d := driver(t, DriverConfig{})
	r := d.Runner()
	defer r.Close()
	a, b := &Request{URL: srv.URL + "/a"}, &Request{URL: srv.URL + "/b"}
	var res Response
	for i, req := range []*Request{a, a, b, a} {
		if out := r.Iterate(req, time.Time{}, &res); out != IterationOK || string(res.Body) != req.URL[len(srv.URL):] {
			t.Fatalf("request %d: outcome %v body %q", i, out, res.Body)
		}
		if i == 0 && (res.Timings.Connecting <= 0) {
			t.Errorf("the first attempt dialled: timings %+v", res.Timings)
		}
		if i > 0 && res.Timings.Connecting != 0 {
			t.Errorf("attempt %d reused the connection: timings %+v", i, res.Timings)
		}
	}
	if n := len(conns); n != 1 {
		t.Errorf("%d connections for one runner and one host", n)
	}
}

// TLS: verified by default (an unknown authority fails with its code),
// skipped with Insecure; net/http speaks HTTP/2 to a server that offers it.
func TestIterateTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			res, _ := once(driver(t, DriverConfig{HTTP2: tr.http2}), &Request{URL: srv.URL})
			if res.ErrorCode != ErrorTLSAuthority || res.Class != ClassTLS || !res.Failed {
				t.Errorf("unverified: code %d class %v err %v", res.ErrorCode, res.Class, res.Err)
			}
			res, _ = once(driver(t, DriverConfig{HTTP2: tr.http2, Insecure: true}), &Request{URL: srv.URL})
			want := "HTTP/1.1"
			if tr.http2 {
				want = "HTTP/2.0"
			}
			if res.Failed || res.Proto != want || string(res.Body) != want {
				t.Errorf("insecure: proto %q body %q err %v", res.Proto, res.Body, res.Err)
			}
			if res.Timings.TLSHandshaking <= 0 {
				t.Errorf("a new TLS connection shows its handshake: %+v", res.Timings)
			}
		})
	}
}

// Abort cuts an in-flight attempt off: the iteration is aborted, neither
// ok nor failed.
func TestIterateAbort(t *testing.T) {
	t.Parallel()
	base := table(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			m := NewMeter()
			d := driver(t, DriverConfig{Meter: m, HTTP2: tr.http2, Abort: ctx, Timeout: time.Minute})
			outs := make(chan Outcome, 1)
			go func() {
				_, out := once(d, &Request{URL: base + "/hang"})
				outs <- out
			}()
			// Abort once the attempt is in flight (an event, not a delay:
			// a slow machine may take long to send it).
			testwait.Until(t, testwait.Deadline, "the attempt in flight", func() bool { return m.Load().Started > 0 })
			cancel()
			out := testwait.Receive(t, outs, "the aborted attempt to return (its timeout is a minute)")
			if c := m.Counts(); out != IterationAborted || c.Aborted != 1 || c.OK+c.Failed != 0 {
				t.Errorf("outcome %v, counts %+v", out, c)
			}
		})
	}
}

func TestDriverConfigErrors(t *testing.T) {
	for name, cfg := range map[string]DriverConfig{
		"no meter":       {},
		"negative tries": {Meter: NewMeter(), Tries: -1},
		"negative slow":  {Meter: NewMeter(), Slow: -1},
	} {
		if _, err := NewDriver(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
