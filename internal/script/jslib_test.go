package script

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The jslib libraries are imported by their real jslib.k6.io URLs with
// Offline set and no module cache: a fetch would fail the load, so each
// test proves the library is served from the binary.

// offline is a run's config that can fetch nothing.
func offline(out *consoleLines) Config {
	return Config{Offline: true, Console: out.add}
}

// headerLog is a loopback server recording each request's path and
// headers.
type headerLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (h *headerLog) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.reqs = append(h.reqs, r.Clone(r.Context()))
		h.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"items":[1,2,3]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (h *headerLog) all() []*http.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*http.Request(nil), h.reqs...)
}

func TestJSLibTextSummaryAndJUnit(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "s.js", `
import http from 'k6/http';
import { check, group } from 'k6';
import { textSummary, jUnit } from 'https://jslib.k6.io/k6-summary/0.0.2/index.js';
export const options = { iterations: 2, thresholds: { http_reqs: ['count>=2'], http_req_failed: ['rate>0.5'] } };
export default function () {
  group('api', () => {
    const res = http.get(__ENV.BASE + '/');
    check(res, { 'status is 200': (r) => r.status === 200, 'never': () => false });
  });
}
export function handleSummary(data) {
  return { stdout: textSummary(data, { indent: ' ', enableColors: false }), 'junit.xml': jUnit(data) };
}
`)
	_, res := runScript(t, path, base, Config{Offline: true}, 30*time.Second)
	if res.SummaryErr != nil {
		t.Fatal(res.SummaryErr)
	}
	out := map[string]string{}
	for _, o := range res.Outputs {
		out[o.Name] = string(o.Data)
	}
	text := out["stdout"]
	for _, want := range []string{
		"     █ api\n",
		"       ✓ status is 200\n",
		"       ✗ never\n        ↳  0% — ✓ 0 / ✗ 2\n",
		"   ✓ http_reqs.",
		"   ✗ http_req_failed.",
		": 0.00% ✓ 0 ✗ 2\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("textSummary lacks %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`(?m)^     http_req_duration\.+: avg=\S+ min=\S+ med=\S+ max=\S+ p\(90\)=\S+ p\(95\)=\S+$`).MatchString(text) {
		t.Errorf("textSummary has no Trend line in summaryTrendStats order:\n%s", text)
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("enableColors false, yet colours:\n%s", text)
	}
	junit := out["junit.xml"]
	for _, want := range []string{
		`<testsuites tests="2" failures="1">`,
		`<testcase name="http_reqs - count&gt;=2" />`,
		`<testcase name="http_req_failed - rate&gt;0.5"><failure message="failed" /></testcase>`,
	} {
		if !strings.Contains(junit, want) {
			t.Errorf("jUnit lacks %q:\n%s", want, junit)
		}
	}
}

func TestJSLibK6Utils(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "s.js", `
import { randomIntBetween, randomItem, randomString, uuidv4, findBetween, normalDistributionStages } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';
export default function () {
  const ints = new Set();
  for (let i = 0; i < 200; i++) ints.add(randomIntBetween(3, 5));
  console.log('ints', [...ints].sort().join(''));
  console.log('item', ['a', 'b'].includes(randomItem(['a', 'b'])));
  console.log('string', randomString(12).length, /^[ab]+$/.test(randomString(30, 'ab')));
  const re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  console.log('uuid', re.test(uuidv4()), re.test(uuidv4(true)), uuidv4() !== uuidv4());
  console.log('between', findBetween('<a>1</a><a>2</a>', '<a>', '</a>'), findBetween('<a>1</a><a>2</a>', '<a>', '</a>', true).join('+'), findBetween('x', '<', '>'));
  const st = normalDistributionStages(100, 100, 5);
  console.log('stages', st.length, st[0].duration, st[st.length - 1].target, Math.max(...st.map((s) => s.target)));
}
`)
	_, base := startTarget(t, robust())
	runScript(t, path, base, offline(&out), 30*time.Second)
	got := strings.Join(out.all(), "|")
	want := "ints 345|item true|string 12 true|uuid true true true|between 1 1+2 null|stages 7 10s 0 100"
	if got != want {
		t.Fatalf("console %q\nwant    %q", got, want)
	}
}

func TestJSLibK6ChaiJS(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "s.js", `
import http from 'k6/http';
import chai, { describe, expect } from 'https://jslib.k6.io/k6chaijs/4.3.4.3/index.js';
export default function () {
  const ok = describe('catalog', () => {
    const res = http.get(__ENV.BASE + '/');
    expect(res.status, 'status').to.equal(200);
    expect(res.json().items, 'items').to.have.lengthOf(3);
    expect([1, 2], 'list').to.deep.equal([1, 2]);
    expect(true, 'flag').to.be.true();
    expect(null, 'nothing').to.be.null;
    expect([], 'none').to.be.empty.and.to.be.an('array');
  });
  const bad = describe('broken', () => {
    expect(1, 'one').to.equal(2);
    expect(1, 'never reached').to.equal(1);
  });
  const threw = describe('throws', () => { throw 'boom'; });
  console.log('results', ok, bad, threw);
}
`)
	base := (&headerLog{}).serve(t)
	r, _ := runScript(t, path, base, offline(&out), 30*time.Second)
	if got := strings.Join(out.all(), "|"); !strings.HasPrefix(got, "results true false false") {
		t.Fatalf("console %q, want describe's results true false false", got)
	}
	checks := map[string][2]uint64{}
	for _, g := range r.Summary(time.Second).Root.Groups {
		for _, c := range g.Checks {
			checks[g.Name+": "+c.Name] = [2]uint64{c.Passes, c.Fails}
		}
	}
	want := map[string][2]uint64{
		"catalog: expected status to equal 200":         {1, 0},
		"catalog: expected items to have a length of 3": {1, 0},
		// lengthOf asserts the property first: chai's own two assertions.
		"catalog: expected items to have property 'length'": {1, 0},
		"catalog: expected list to deeply equal [ 1, 2 ]":   {1, 0},
		"catalog: expected flag to be true":                 {1, 0},
		"catalog: expected nothing to be null":              {1, 0},
		"catalog: expected none to be empty":                {1, 0},
		"catalog: expected none to be an array":             {1, 0},
		"broken: expected one to equal 2":                   {0, 1},
		`throws: Exception raised "boom"`:                   {0, 1},
	}
	if len(checks) != len(want) {
		t.Errorf("checks %v, want %v", checks, want)
	}
	for name, w := range want {
		if checks[name] != w {
			t.Errorf("check %q: %v, want %v (all: %v)", name, checks[name], w, checks)
		}
	}
}

func TestJSLibURL(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "s.js", `
import { URL, URLSearchParams } from 'https://jslib.k6.io/url/1.0.0/index.js';
export default function () {
  const u = new URL('HTTP://User:Pw@Example.COM:80/a/./b/../c d?x=1&y=a+b#frag');
  console.log(u.href, u.protocol, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, u.origin, u.username);
  u.searchParams.append('q', "k6 rocks!");
  u.searchParams.set('x', '2');
  console.log(u.search, u.searchParams.get('y'), u.searchParams.getAll('x').length);
  console.log(new URL('../d?z#h', 'https://h.test:8443/a/b/c').href);
  console.log(new URL('//other.test/p', 'https://h.test/').href, new URL('?q=1', 'https://h.test/a/b').href);
  const p = new URLSearchParams({ b: '2', a: '1' });
  p.append('a', '0');
  p.sort();
  console.log(p.toString(), [...p.keys()].join(','), p.has('b'), p.size);
  console.log(new URLSearchParams('?a=%20x&b=%zz').get('a'), new URLSearchParams([['k', 'v']]).toString());
  try { new URL('no scheme'); } catch (e) { console.log(e.name); }
}
`)
	_, base := startTarget(t, robust())
	runScript(t, path, base, offline(&out), 30*time.Second)
	want := []string{
		"http://User:Pw@example.com/a/c%20d?x=1&y=a+b#frag http: example.com example.com  /a/c%20d ?x=1&y=a+b #frag http://example.com User",
		"?x=2&y=a+b&q=k6+rocks%21 a b 1",
		"https://h.test:8443/a/d?z#h",
		"https://other.test/p https://h.test/a/b?q=1",
		"a=1&a=0&b=2 a,a,b true 3",
		" x k=v",
		"TypeError",
	}
	got := out.all()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("console:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestJSLibHttpx(t *testing.T) {
	log := &headerLog{}
	base := log.serve(t)
	path := writeScript(t, "s.js", `
import { Httpx } from 'https://jslib.k6.io/httpx/0.1.0/index.js';
const session = new Httpx({ baseURL: __ENV.BASE, headers: { 'X-Session': 's' }, timeout: 5000 });
session.addHeader('Authorization', 'token1');
session.addTags({ flow: 'login' });
export default function () {
  session.get('/one');
  session.post('/two', 'body', { headers: { 'X-Call': 'c' } });
  session.clearHeader('Authorization');
  session.delete(__ENV.BASE + '/three');
}
`)
	runScript(t, path, base, Config{Offline: true}, 30*time.Second)
	reqs := log.all()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	want := []struct{ method, path, auth, call string }{
		{"GET", "/one", "token1", ""}, {"POST", "/two", "token1", "c"}, {"DELETE", "/three", "", ""},
	}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.URL.Path != w.path || r.Header.Get("Authorization") != w.auth ||
			r.Header.Get("X-Call") != w.call || r.Header.Get("X-Session") != "s" {
			t.Errorf("request %d: %s %s headers %v, want %+v with X-Session s", i, r.Method, r.URL.Path, r.Header, w)
		}
	}
}

func TestJSLibInstrumentation(t *testing.T) {
	log := &headerLog{}
	base := log.serve(t)
	path := writeScript(t, "s.js", `
import http from 'k6/http';
import tempo from 'https://jslib.k6.io/http-instrumentation-tempo/1.0.1/index.js';
import pyroscope from 'https://jslib.k6.io/http-instrumentation-pyroscope/1.0.2/index.js';
tempo.instrumentHTTP({ propagator: 'w3c' });
const jaeger = new tempo.Client({ propagator: 'jaeger', sampling: 0 });
const profiled = new pyroscope.Client();
export default function () {
  http.get(__ENV.BASE + '/traced');
  http.post(__ENV.BASE + '/traced-post', 'x');
  jaeger.get(__ENV.BASE + '/jaeger');
  profiled.get(__ENV.BASE + '/profiled', { tags: { name: 'profile-me' } });
}
`)
	runScript(t, path, base, Config{Offline: true}, 30*time.Second)
	reqs := log.all()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	w3c := regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)
	for _, r := range reqs[:2] {
		if !w3c.MatchString(r.Header.Get("Traceparent")) {
			t.Errorf("%s: traceparent %q, want a sampled W3C trace context", r.URL.Path, r.Header.Get("Traceparent"))
		}
	}
	if reqs[0].Header.Get("Traceparent") == reqs[1].Header.Get("Traceparent") {
		t.Errorf("two requests share a trace context")
	}
	if h := reqs[2].Header.Get("Uber-Trace-Id"); !regexp.MustCompile(`^[0-9a-f]{32}:[0-9a-f]{16}:0:0$`).MatchString(h) || reqs[2].Header.Get("Traceparent") != "" {
		t.Errorf("jaeger client: uber-trace-id %q traceparent %q, want an unsampled jaeger context only", h, reqs[2].Header.Get("Traceparent"))
	}
	if h := reqs[3].Header.Get("Baggage"); h != "k6.scenario=default, k6.name=profile-me, k6.test_run_id=" {
		t.Errorf("pyroscope baggage %q", h)
	}
}

func TestJSLibPapaparse(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "s.js", `
import papaparse from 'https://jslib.k6.io/papaparse/5.1.1/index.js';
export default function () {
  const res = papaparse.parse('name,age\nann,31\n"b, c",7', { header: true });
  console.log(JSON.stringify(res.data), res.errors.length);
}
`)
	_, base := startTarget(t, robust())
	runScript(t, path, base, offline(&out), 30*time.Second)
	if got, want := strings.Join(out.all(), "|"), `[{"name":"ann","age":"31"},{"name":"b, c","age":"7"}] 0`; got != want {
		t.Fatalf("console %q, want %q", got, want)
	}
}

// TestJSLibRefusals: jslib libraries not built in, and names a built-in
// library does not export, are refused at load in one line naming them
// all, with the k6 modules missing.
func TestJSLibRefusals(t *testing.T) {
	path := writeScript(t, "s.js", `import { S3Client } from 'https://jslib.k6.io/aws/0.11.0/s3.js';
import { getCurrentStageIndex, uuidv4 } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';
import browser from 'k6/browser';
import { Kafka } from 'https://jslib.k6.io/kafka/1.0.0/index.js';
export default function () {}
`)
	_, err := Load(path, Config{Offline: true})
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, want := range []string{`s.js:1: jslib library "aws"`, `s.js:2: The requested module "https://jslib.k6.io/k6-utils/1.4.0/index.js" does not provide an export named "getCurrentStageIndex"`,
		`s.js:3: module "k6/browser"`, `s.js:4: jslib library "kafka"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "uuidv4") {
		t.Errorf("error %q: want one line naming only what is missing", msg)
	}
}
