//go:build linux

package engine

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testdns"
	"github.com/throttlekit/throttle/internal/testwait"
)

// rawTarget serves each connection with answer, called once per request
// read off it, until answer returns false (the connection is then closed).
func rawTarget(t *testing.T, answer func(c net.Conn, w *bufio.Writer) bool) []targets.Target {
	t.Helper()
	s := newRawServer(t, func(c net.Conn, w *bufio.Writer, _ *http.Request) bool { return answer(c, w) })
	u, _ := url.Parse(s.url + "/")
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
}

// raw answers every request with s and keeps the connection (keep) or
// closes it.
func raw(s string, keep bool) func(net.Conn, *bufio.Writer) bool {
	return func(_ net.Conn, w *bufio.Writer) bool {
		w.WriteString(s)
		return keep
	}
}

// dominant is the class most attempts ended in (ok counted as ClassOK).
func dominant(c Counts) Class {
	best := ClassOK
	for k := range NumClasses {
		if c.Classes[k] > c.Classes[best] {
			best = k
		}
	}
	return best
}

// The event loop classifies what servers send as the fasthttp transport
// does: well-formed answers of every framing are ok, broken ones fail in
// the same class, on both transports side by side.
func TestEvLoopClassesLikeFastHTTP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer func(net.Conn, *bufio.Writer) bool
		want   Class
	}{
		{"content-length", raw("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", true), ClassOK},
		{"chunked", raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", true), ClassOK},
		{"HTTP/1.0, body until close", raw("HTTP/1.0 200 OK\r\n\r\nhello, until the close", false), ClassOK},
		{"Connection: close", raw("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false), ClassOK},
		{"closes after each answer, unannounced", raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false), ClassOK},
		{"1 MiB body, chunked", raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n"+strings.Repeat("x", 1<<20)+"\r\n0\r\n\r\n", true), ClassOK},
		{"1 MiB body", raw("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n"+strings.Repeat("x", 1<<20), true), ClassOK},
		{"503", raw("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n", true), Class5xx},
		{"429", raw("HTTP/1.1 429 Slow Down\r\nContent-Length: 0\r\n\r\n", true), Class429},
		{"malformed status line", raw("HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok", false), ClassOther},
		{"not HTTP at all", raw("SSH-2.0-OpenSSH_9.6\r\n", false), ClassOther},
		{"invalid chunked encoding", raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n", false), ClassOther},
		{"status line, then close", raw("HTTP/1.1 200 OK\r\n", false), ClassReset},
		{"reset after headers", func(c net.Conn, w *bufio.Writer) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
			w.Flush()
			c.(*net.TCPConn).SetLinger(0) // RST, not FIN
			return false
		}, ClassReset},
		{"absurd header", func(_ net.Conn, w *bufio.Writer) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nX-Huge: " + strings.Repeat("a", 64<<10))
			w.Flush()
			return false
		}, ClassOther},
		{"body stalls", func(c net.Conn, w *bufio.Writer) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			w.Flush()
			c.Read(make([]byte, 1)) // until the client gives up
			return false
		}, ClassTimeout},
		{"no answer", func(c net.Conn, _ *bufio.Writer) bool {
			c.Read(make([]byte, 1)) // until the client gives up
			return false
		}, ClassTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tgts := rawTarget(t, c.answer)
			// A short timeout only where the answer never ends: a 1 MiB
			// body read under -race on a loaded machine took longer than
			// 100 ms and timed out (make stress, once in four).
			timeout := 2 * time.Second
			if c.want == ClassTimeout {
				timeout = 100 * time.Millisecond
			}
			for _, tr := range []string{TransportFastHTTP, TransportEvLoop} {
				res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true, Transport: tr,
					Duration: 200 * time.Millisecond, Timeout: timeout})
				if res.Transport != tr {
					t.Fatalf("transport %q, want %q", res.Transport, tr)
				}
				n := res.Counts
				if got := dominant(n); got != c.want || n.Started == 0 || (c.want != ClassOK && n.OK != 0) {
					t.Errorf("%s: mostly %v, want %v: %+v", res.Transport, got, c.want, n)
				}
				if n.Started != n.OK+n.Failed+n.Aborted || n.IterOK+n.IterFailed+n.Aborted != n.Started {
					t.Errorf("%s: attempts not accounted for: %+v", res.Transport, n)
				}
			}
		})
	}
}

// The event loop takes a closed-loop run of plain http:// targets on one
// address (an IP, or a name looked up once) by default; anything else runs on fasthttp as before, and
// so does a run that asks for fasthttp. An unknown name is refused.
func TestEvLoopChosen(t *testing.T) {
	u := func(s string) targets.Target {
		v, _ := url.Parse(s)
		return targets.Target{Method: "GET", URL: v, Header: http.Header{}}
	}
	closed := fastLimits(governor.Concurrency, 2, 2)
	dns := testdns.Resolver(t)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/a"), u("http://127.0.0.1:1/b")}, Limits: closed}, TransportEvLoop},
		{Config{Targets: []targets.Target{u("http://[::1]:1/")}, Limits: closed, Transport: TransportEvLoop}, TransportEvLoop},
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/")}, Limits: closed, Transport: TransportFastHTTP}, TransportFastHTTP},
		{Config{Targets: []targets.Target{u("http://[fe80::1%25lo]:1/")}, Limits: closed}, TransportFastHTTP},
		{Config{Targets: []targets.Target{u("https://127.0.0.1:1/")}, Limits: closed}, TransportFastHTTP},
		// A name is looked up once (localhost from /etc/hosts; the test
		// resolver answers anything else "no such name", so no query
		// leaves the machine); one that does not resolve stays on fasthttp,
		// whose attempts report the DNS error as ever.
		{Config{Targets: []targets.Target{u("http://localhost:1/")}, Limits: closed, Resolver: dns}, TransportEvLoop},
		{Config{Targets: []targets.Target{u("http://no-such-host.invalid:1/")}, Limits: closed, Resolver: dns}, TransportFastHTTP},
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/"), u("http://127.0.0.2:1/")}, Limits: closed}, TransportFastHTTP},
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/")}, Limits: fastLimits(governor.Rate, 10, 10)}, TransportFastHTTP},
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/")}, Limits: fastLimits(governor.Rate, 10, 10), Transport: TransportEvLoop}, TransportEvLoop},
		{Config{Targets: []targets.Target{u("http://127.0.0.1:1/")}, Limits: closed, HTTP2: true}, TransportNetHTTP},
	} {
		e := newEngine(t, c.cfg)
		if e.Transport() != c.want {
			t.Errorf("%v (rate %v, http2 %v): %s, want %s", c.cfg.Targets[0].URL, c.cfg.Limits.Mode == governor.Rate, c.cfg.HTTP2, e.Transport(), c.want)
		}
	}
	if _, err := New(Config{Targets: []targets.Target{u("http://127.0.0.1:1/")}, Limits: closed, Transport: "gnet"}); err == nil ||
		!strings.Contains(err.Error(), TransportEnv) {
		t.Errorf("an unknown transport: %v", err)
	}
}

// Every resolved attempt on the loop reaches the latency recorder, timed
// from its start.
func TestEvLoopLatencyRecorded(t *testing.T) {
	t.Parallel()
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) }))
	rec := &countingRecorder{}
	res := run(t, Config{Targets: slow, Limits: fastLimits(governor.Concurrency, 2, 2), Fixed: true, Duration: 200 * time.Millisecond, Latency: rec})
	if res.Transport != TransportEvLoop || rec.n.Load() != int64(res.Counts.OK+res.Counts.Failed) || res.Counts.OK == 0 ||
		time.Duration(rec.max.Load()) < 20*time.Millisecond {
		t.Errorf("%s: %d latencies recorded (max %v) for %+v", res.Transport, rec.n.Load(), time.Duration(rec.max.Load()), res.Counts)
	}
}

// Targets are sent round-robin with their own method, headers (Host and
// User-Agent too) and body, on either HTTP/1.1 transport. The handler
// counts under a lock and never blocks: one worker sends thousands of
// requests in 100 ms on an idle machine.
func TestTargetsRoundRobin(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{TransportFastHTTP, TransportEvLoop} {
		t.Run(tr, func(t *testing.T) { t.Parallel(); targetsRoundRobin(t, tr) })
	}
}

func targetsRoundRobin(t *testing.T, transport string) {
	type seen struct{ method, path, hdr, body, ua, host string }
	var (
		mu         sync.Mutex
		n          [3]int
		unexpected []seen
	)
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 16)
		k, _ := r.Body.Read(b)
		s := seen{r.Method, r.URL.RequestURI(), r.Header.Get("X-T"), string(b[:k]), r.UserAgent(), r.Host}
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case seen{"GET", "/a?q=1", "1", "", "throttle", "example.test"}:
			n[0]++
		case seen{"POST", "/b", "2", "hello", "mine", r.Host}:
			n[1]++
		case seen{"HEAD", "/c", "", "", "throttle", r.Host}:
			w.Header().Set("Content-Length", "100") // HEAD: no body follows
			n[2]++
		default:
			unexpected = append(unexpected, s)
		}
	}))
	base := tgts[0].URL.String()
	a, _ := url.Parse(base + "a?q=1")
	b, _ := url.Parse(base + "b")
	c, _ := url.Parse(base + "c")
	list := []targets.Target{
		{Method: "GET", URL: a, Header: http.Header{"X-T": {"1"}, "Host": {"example.test"}}},
		{Method: "POST", URL: b, Header: http.Header{"X-T": {"2"}, "User-Agent": {"mine"}}, Body: []byte("hello")},
		{Method: "HEAD", URL: c, Header: http.Header{}},
	}
	res := run(t, Config{Targets: list, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 100 * time.Millisecond, Transport: transport})
	mu.Lock()
	defer mu.Unlock()
	if len(unexpected) > 0 {
		t.Fatalf("unexpected requests %+v", unexpected)
	}
	if res.Transport != transport || n[0]+n[1]+n[2] != int(res.Counts.OK) || n[0]-n[2] > 1 || n[0] == 0 || res.Counts.Failed != 0 {
		t.Errorf("requests %v, counts %+v: one worker must take the targets in turn", n, res.Counts)
	}
}

// A request body larger than the socket's send buffer is written as the
// connection takes it (the loop waits for writability between writes).
func TestEvLoopLargeRequestBody(t *testing.T) {
	t.Parallel()
	var got atomic.Int64
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
	}))
	tgts[0].Method, tgts[0].Body = "POST", []byte(strings.Repeat("b", 8<<20))
	res := run(t, Config{Targets: tgts, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 100 * time.Millisecond})
	if res.Transport != TransportEvLoop || res.Counts.OK == 0 || res.Counts.Failed != 0 || got.Load() != 8<<20 {
		t.Errorf("%s: counts %+v, the server read %d bytes of %d", res.Transport, res.Counts, got.Load(), 8<<20)
	}
}

// Governed, the loops' workers follow the governor's offer against a
// target with a concurrency limit, as goroutine workers do.
func TestEvLoopGoverned(t *testing.T) {
	t.Parallel()
	var busy atomic.Int64
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer busy.Add(-1)
		if busy.Add(1) > 4 {
			w.WriteHeader(503)
			return
		}
		time.Sleep(2 * time.Millisecond)
	}))
	l := fastLimits(governor.Concurrency, 32, 1)
	res := settled(t, Config{Targets: tgts, Limits: l}, 2)
	if res.Transport != TransportEvLoop || res.Workers > 32 || res.Counts.OK == 0 || res.Capacity.Windows < 2 {
		t.Errorf("transport %s, %d workers, counts %+v, capacity %+v", res.Transport, res.Workers, res.Counts, res.Capacity)
	}
	if res.Capacity.Offer > 16 {
		t.Errorf("the estimate %v concurrent is far above the target's 4 slots", res.Capacity.Offer)
	}
}

// A slow target is no saturated generator on the loop: its answers take
// 100 ms, so the 4 slots serve 40 arrivals a second of the 400 asked for
// and the rest are dropped — the drops are the target's, the loop waits
// for its answers, and the watch says so (no saturated tick) on both
// transports. Only the drop rule is on: the others have their own tests.
func TestSlowTargetNotSaturated(t *testing.T) {
	t.Parallel()
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(100 * time.Millisecond) }))
	for _, tr := range []string{TransportEvLoop, TransportFastHTTP} {
		res := run(t, Config{Targets: slow, Limits: fastLimits(governor.Rate, 400, 400), Fixed: true, MaxVUs: 4, Duration: 1500 * time.Millisecond,
			Transport: tr, Watch: WatchConfig{CPU: -1, Lag: -1, Shortfall: -1, Wait: -1, Read: -1, Every: 100 * time.Millisecond}})
		g := res.Generator
		if res.Transport != tr || res.Counts.Dropped == 0 || res.Counts.OK == 0 {
			t.Fatalf("%s: %+v, want the slow target's answers and dropped arrivals", res.Transport, res.Counts)
		}
		if g.Ticks < 3 || g.SaturatedTicks != 0 {
			t.Errorf("%s: %d of %d arrivals dropped, watch %+v: a slow target's drops called the generator's saturation",
				tr, res.Counts.Dropped, res.Arrivals, g)
		}
	}
}

// An open loop's slots that stay unused close their connections: the
// target's first answers take 300 ms, so at 40 arrivals a second the loop
// makes about a dozen slots, each with its connection; then it answers at
// once, one or two slots serve the rate, and the others' connections are
// closed by the loop after openIdleClose — seen by the server while the
// run goes on, which keeps sending without a failure.
func TestEvLoopOpenIdleConnsClose(t *testing.T) {
	t.Parallel()
	var served, closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) <= 12 {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/")
	stop := start(t, Config{Targets: []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}, Limits: fastLimits(governor.Rate, 40, 40),
		Fixed: true, Duration: time.Minute, Transport: TransportEvLoop, Watch: WatchConfig{CPU: -1}})
	testwait.Until(t, 30*time.Second, "the idle slots' connections to close", func() bool { return closed.Load() >= 4 })
	before := served.Load()
	testwait.Until(t, 30*time.Second, "more answers after the close", func() bool { return served.Load() > before+10 })
	res := stop()
	if res.Transport != TransportEvLoop || res.Workers < 5 || res.Counts.Failed != 0 {
		t.Errorf("%s: %d workers, counts %+v: want the stall's slots and no failure", res.Transport, res.Workers, res.Counts)
	}
}

// The loop's knobs are refused by name when they are not what they can
// be, never taken as their default.
func TestEvLoopKnobsChecked(t *testing.T) {
	for _, c := range []struct{ env, val, want string }{
		{"THROTTLE_EVLOOP_LOOPS", "two", "THROTTLE_EVLOOP_LOOPS"},
		{"THROTTLE_EVLOOP_LOOPS", "0", "THROTTLE_EVLOOP_LOOPS"},
		{"THROTTLE_EVLOOP_RAWWAIT", "false", "THROTTLE_EVLOOP_RAWWAIT"},
		{"THROTTLE_EVLOOP_LOOPS", "2", ""},
		{"THROTTLE_EVLOOP_RAWWAIT", "0", ""},
		{"THROTTLE_EVLOOP_RAWWAIT", "1", ""},
		{"THROTTLE_RXSTAMP", "off", "THROTTLE_RXSTAMP"},
		{"THROTTLE_RXSTAMP", "0", ""},
		{"THROTTLE_RXSTAMP", "1", ""},
	} {
		t.Run(c.env+"="+c.val, func(t *testing.T) {
			t.Setenv(c.env, c.val)
			_, err := transportName("")
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s=%q: err %v, want one naming %q", c.env, c.val, err, c.want)
			}
		})
	}
}
