package script

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "http://" + addr + "/"
}

// TestThrowOption: under throw (k6's --throw) a request that cannot go
// out, and a custom metric's bad value, throw; without it the request
// returns a Response with its error and the bad value is dropped.
func TestThrowOption(t *testing.T) {
	for _, throw := range []bool{false, true} {
		path := writeScript(t, "throw.js", fmt.Sprintf(`
import http from 'k6/http';
import { Counter } from 'k6/metrics';
const thrown = new Counter('thrown');
const errored = new Counter('errored');
const bad = new Counter('bad');
export const options = { iterations: 2, throw: %v };
export default function () {
  try { const r = http.get(__ENV.BASE); if (r.error !== '') errored.add(1); } catch (e) { thrown.add(1); }
  try { bad.add(NaN); } catch (e) { thrown.add(10); }
  try { http.batch([__ENV.BASE]); } catch (e) { thrown.add(100); }
}
`, throw))
		r, _ := runScript(t, path, closedURL(t), fast(), 30*time.Second)
		st := metricStats(r)
		want := map[bool][2]float64{false: {0, 2}, true: {222, 0}}[throw]
		if st["thrown"].Sum != want[0] || st["errored"].Sum != want[1] || st["bad"].Count != 0 {
			t.Errorf("throw %v: thrown %v, errored %v, bad values %d: want %v", throw, st["thrown"].Sum, st["errored"].Sum, st["bad"].Count, want)
		}
	}
}

// TestBatchLimits: http.batch has at most options.batch requests in
// flight at once, and at most batchPerHost to one host.
func TestBatchLimits(t *testing.T) {
	var inflight, peak atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond) // the server's latency, so requests overlap
	}))
	defer srv.Close()
	for _, c := range []struct {
		opts string
		want int64
	}{{"batch: 3, batchPerHost: 0", 3}, {"batch: 20, batchPerHost: 2", 2}, {"batch: 20, batchPerHost: 0", 10}} {
		peak.Store(0)
		path := writeScript(t, "batch.js", `
import http from 'k6/http';
export const options = { iterations: 1, `+c.opts+` };
export default function () {
  const rs = http.batch(Array.from({ length: 10 }, () => __ENV.BASE));
  if (rs.length !== 10 || rs.some((r) => r.status !== 200)) throw new Error('batch: ' + rs.map((r) => r.status));
}
`)
		r, _ := runScript(t, path, srv.URL, fast(), 30*time.Second)
		if n := r.Phases()[0].Counts(); n.IterOK != 1 {
			t.Errorf("%s: counts %+v, want the iteration ok", c.opts, n)
		}
		// On a loaded machine the requests may overlap less, never more.
		if p := peak.Load(); p > c.want || c.want < 10 && p < 2 {
			t.Errorf("%s: %d requests in flight at most, want %d", c.opts, p, c.want)
		}
	}
}

// TestHTTPDebug: httpDebug dumps each request and its response, with the
// bodies under "full" only.
func TestHTTPDebug(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Answer", "42")
		_, _ = w.Write([]byte("pong-body"))
	}))
	defer srv.Close()
	for _, mode := range []string{"headers", "full"} {
		path := writeScript(t, "debug.js", `
import http from 'k6/http';
export const options = { iterations: 1, httpDebug: '`+mode+`' };
export default function () { http.post(__ENV.BASE + '/ping?x=1', 'ping-body', { headers: { 'X-Asked': 'yes' } }); }
`)
		var mu sync.Mutex
		var dumps []string
		cfg := fast()
		cfg.HTTPDebug = func(d string) { mu.Lock(); dumps = append(dumps, d); mu.Unlock() }
		runScript(t, path, srv.URL, cfg, 30*time.Second)
		mu.Lock()
		all := strings.Join(dumps, "")
		mu.Unlock()
		host := strings.TrimPrefix(srv.URL, "http://")
		for _, want := range []string{"Request:\nPOST /ping?x=1 HTTP/1.1\nHost: " + host + "\n", "X-Asked: yes\n", "Response:\nHTTP/1.1 200 OK\n", "X-Answer: 42\n"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: the dump lacks %q:\n%s", mode, want, all)
			}
		}
		if full := strings.Contains(all, "ping-body") && strings.Contains(all, "pong-body"); full != (mode == "full") || len(dumps) != 1 {
			t.Errorf("%s: %d dumps, bodies shown %v:\n%s", mode, len(dumps), full, all)
		}
	}
}

// TestNoVUConnectionReuse: a VU opens a new connection each iteration
// under noVUConnectionReuse, and keeps one otherwise.
func TestNoVUConnectionReuse(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for _, c := range []struct {
		reuse bool
		want  int64
	}{{true, 1}, {false, 4}} {
		conns.Store(0)
		path := writeScript(t, "reuse.js", fmt.Sprintf(`
import http from 'k6/http';
export const options = { vus: 1, iterations: 4, noVUConnectionReuse: %v };
export default function () { http.get(__ENV.BASE); http.get(__ENV.BASE); }
`, !c.reuse))
		runScript(t, path, srv.URL, fast(), 30*time.Second)
		if n := conns.Load(); n != c.want {
			t.Errorf("noVUConnectionReuse %v: %d connections, want %d", !c.reuse, n, c.want)
		}
	}
}

// TestDefaultHeaderShared: a request that sets no header of its own sends
// the run's defaults (userAgent, noConnectionReuse's Connection: close)
// from one shared map; requests with their own headers, cookies or a
// digest retry add theirs without changing that map for the next one.
func TestDefaultHeaderShared(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		if q.URL.Path == "/digest" && q.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Digest realm="r", nonce="n", qop="auth"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = fmt.Fprintf(w, "%s|%v|%s|%s", q.UserAgent(), q.Close, q.Header.Get("X-Own"), q.Header.Get("Cookie"))
	}))
	t.Cleanup(srv.Close)
	path := writeScript(t, "hdr.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 2, vus: 1, userAgent: 'agent/2', noConnectionReuse: true };
export default function () {
  const u = __ENV.BASE + '/';
  check(http.get(u), { 'plain': (r) => r.body === 'agent/2|true||' });
  check(http.get(u, { headers: { 'X-Own': 'a' } }), { 'own': (r) => r.body === 'agent/2|true|a|' });
  check(http.get(u, { cookies: { c: '1' } }), { 'cookie': (r) => r.body === 'agent/2|true||c=1' });
  const d = __ENV.BASE.replace('http://', 'http://u:p@') + '/digest';
  check(http.get(d, { auth: 'digest' }), { 'digest': (r) => r.status === 200 });
  check(http.get(u), { 'plain again': (r) => r.body === 'agent/2|true||' });
}
`)
	r, _ := runScript(t, path, srv.URL, Config{}, 20*time.Second)
	for _, c := range r.Summary(time.Second).Root.Checks {
		if c.Passes != 2 || c.Fails != 0 {
			t.Errorf("check %q: %d passes %d fails, want 2 and 0", c.Name, c.Passes, c.Fails)
		}
	}
	if h := r.defaultHeader(); len(h) != 2 || h.Get("User-Agent") != "agent/2" || h.Get("Connection") != "close" {
		t.Errorf("shared default header changed: %v", h)
	}
}

// TestSameWireReused: a request whose wire form is the previous one's is
// sent from that one's slot; a request that differs in URL, method,
// header, Host or body, and one after a redirect, after a throwing params
// and after a digest retry, still goes out as written.
func TestSameWireReused(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		if q.URL.Path == "/digest" && q.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Digest realm="r", nonce="n", qop="auth"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if q.URL.Path == "/moved" {
			http.Redirect(w, q, "/a", http.StatusFound)
			return
		}
		b := make([]byte, 16)
		n, _ := q.Body.Read(b)
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s %s %s %s", q.Method, q.URL.Path, q.Header.Get("X-Own"), q.Host, b[:n]))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	path := writeScript(t, "wire.js", `
import http from 'k6/http';
export const options = { iterations: 1 };
export default function () {
  const u = __ENV.BASE;
  http.get(u + '/a'); http.get(u + '/a'); http.get(u + '/b'); http.get(u + '/b');
  http.get(u + '/a', { headers: { 'X-Own': 'x' } }); http.get(u + '/a');
  http.head(u + '/a'); http.get(u + '/a');
  http.get(u + '/a', { headers: { Host: 'other.test' } }); http.get(u + '/a');
  http.post(u + '/a', 'body'); http.get(u + '/a');
  http.get(u + '/moved'); http.get(u + '/b');
  try { http.get(u + '/c', { responseType: 'nonsense' }); } catch (e) {}
  http.get(u + '/b');
  http.get(u.replace('http://', 'http://u:p@') + '/digest', { auth: 'digest' }); http.get(u + '/a');
}
`)
	runScript(t, path, srv.URL, Config{}, 20*time.Second)
	host := strings.TrimPrefix(srv.URL, "http://")
	want := []string{"GET /a", "GET /a", "GET /b", "GET /b", "GET /a x", "GET /a", "HEAD /a", "GET /a",
		"GET /a  other.test", "GET /a", "POST /a   body", "GET /a", "GET /a", "GET /b", "GET /b", "GET /digest", "GET /a"}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("target saw %d requests, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		f := strings.SplitN(w+"    ", " ", 5)
		if f[3] == "" {
			f[3] = host
		}
		if exp := strings.Join([]string{f[0], f[1], f[2], f[3], strings.TrimSpace(f[4])}, " "); got[i] != exp {
			t.Errorf("request %d: %q, want %q", i, got[i], exp)
		}
	}
}
