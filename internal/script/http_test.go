package script

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echo answers every request with a JSON echo of it; /status/N answers N;
// /flaky fails every odd request with 503; /slow sleeps 300 ms; /redirect
// redirects to /.
func echo(t *testing.T) (string, *atomic.Int64) {
	var flaky atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/status/"):
			var code int
			for _, c := range strings.TrimPrefix(r.URL.Path, "/status/") {
				code = code*10 + int(c-'0')
			}
			w.WriteHeader(code)
			return
		case r.URL.Path == "/flaky":
			if flaky.Add(1)%2 == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		case r.URL.Path == "/slow":
			time.Sleep(300 * time.Millisecond)
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", "yes")
		_, _ = io.WriteString(w, `{"method":"`+r.Method+`","path":"`+r.URL.Path+`","ct":"`+r.Header.Get("Content-Type")+`","x":"`+r.Header.Get("X-Test")+`","body":"`+strings.ReplaceAll(string(b), `"`, `'`)+`","nested":{"list":[1,2,3]}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &flaky
}

// TestHTTPAPI drives k6/http's API through a script whose checks say what
// k6's documentation says; every check must pass.
func TestHTTPAPI(t *testing.T) {
	base, _ := echo(t)
	var out consoleLines
	path := writeScript(t, "api.js", `
import http from 'k6/http';
import { check, fail } from 'k6';
export const options = { iterations: 1 };
export default function () {
  const B = __ENV.BASE;
  let r = http.get(B + '/get', { headers: { 'X-Test': 'h1' }, tags: { name: 'get' } });
  check(r, {
    'get status': (r) => r.status === 200,
    'get json': (r) => r.json().method === 'GET' && r.json('nested.list.1') === 2,
    'get header sent': (r) => r.json().x === 'h1',
    'get headers': (r) => r.headers['X-Echo'] === 'yes',
    'get proto': (r) => r.proto === 'HTTP/1.1',
    'get url': (r) => r.url === B + '/get',
    'get timings': (r) => r.timings.duration > 0 && r.timings.waiting > 0,
    'get no error': (r) => r.error === '' && r.error_code === 0,
  });
  r = http.post(B + '/post', JSON.stringify({ a: 1 }), { headers: { 'Content-Type': 'application/json' } });
  check(r, { 'post body': (r) => r.json().body === "{'a':1}" && r.json().ct === 'application/json' });
  r = http.post(B + '/form', { a: '1', b: 'x y' });
  check(r, { 'form body': (r) => r.json().body === 'a=1&b=x+y' && r.json().ct === 'application/x-www-form-urlencoded' });
  check(http.put(B + '/p', 'x'), { 'put': (r) => r.json().method === 'PUT' });
  check(http.patch(B + '/p', 'x'), { 'patch': (r) => r.json().method === 'PATCH' });
  check(http.del(B + '/p'), { 'del': (r) => r.json().method === 'DELETE' });
  check(http.head(B + '/p'), { 'head': (r) => r.status === 200 && r.body === '' });
  check(http.options(B + '/p'), { 'options': (r) => r.json().method === 'OPTIONS' });
  check(http.request('GET', B + '/req'), { 'request': (r) => r.json().path === '/req' });
  check(http.get(B + '/status/404'), { '404 fails by default': (r) => r.status === 404 && r.error_code === 1404 });
  check(http.get(B + '/status/404', { responseCallback: http.expectedStatuses(404) }), { '404 expected': (r) => r.status === 404 });
  check(http.get(B + '/slow', { timeout: '50ms' }), { 'timeout': (r) => r.status === 0 && r.error_code === 1050 && r.error !== '' });
  check(http.get(B + '/redirect'), { 'redirect followed': (r) => r.status === 200 && r.url === B + '/' });
  check(http.get(B + '/redirect', { redirects: 0 }), { 'redirect not followed': (r) => r.status === 302 });
  check(http.get(B + '/x', { responseType: 'none' }), { 'none': (r) => r.body === null });
  check(http.get(B + '/x', { responseType: 'binary' }), { 'binary': (r) => r.body.byteLength > 10 });
  const rs = http.batch([B + '/b1', ['POST', B + '/b2', 'z'], { method: 'GET', url: B + '/b3' }]);
  check(rs, { 'batch array': (rs) => rs.length === 3 && rs[0].json().path === '/b1' && rs[1].json().body === 'z' && rs[2].json().path === '/b3' });
  const ro = http.batch({ one: B + '/o1', two: ['GET', B + '/o2'] });
  check(ro, { 'batch object': (ro) => ro.one.json().path === '/o1' && ro.two.json().path === '/o2' });
  http.setResponseCallback(http.expectedStatuses({ min: 200, max: 299 }, 404));
  check(http.get(B + '/status/404'), { 'callback set': (r) => r.status === 404 });
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	p := r.Phases()[0]
	for _, c := range p.Checks() {
		if c.Failed != 0 || c.Pass != 1 {
			t.Errorf("check %q: %d passed, %d failed", c.Name, c.Pass, c.Failed)
		}
	}
	if len(p.Checks()) != 26 {
		t.Errorf("%d checks ran, want 26", len(p.Checks()))
	}
	c := p.Counts()
	// Failed attempts: the 404 without a callback and the timeout; the
	// iteration therefore failed.
	if c.Failed != 2 || c.IterFailed != 1 {
		t.Errorf("counts %+v: want 2 failed attempts (a 404, a timeout) and a failed iteration", c)
	}
	if lines := out.all(); len(lines) != 0 {
		t.Errorf("console %q", lines)
	}
}

// TestTries: throttle.tries retries an iteration's requests until none
// failed; every try is an attempt, the iteration's outcome the last try's.
func TestTries(t *testing.T) {
	base, flaky := echo(t)
	path := writeScript(t, "tries.js", `
import http from 'k6/http';
import throttle from 'k6/x/throttle';
export const options = { iterations: 5 };
export default function () {
  const r = throttle.tries(3, () => http.get(__ENV.BASE + '/flaky'), { backoff: '1ms' });
  if (r.status !== 200) throw new Error('tries returned ' + r.status);
}
`)
	r, _ := runScript(t, path, base, Config{}, 30*time.Second)
	c := r.Phases()[0].Counts()
	// Every odd request fails: each iteration fails once, then succeeds.
	if c.IterOK != 5 || c.IterFailed != 0 || c.OK != 5 || c.Failed != 5 || flaky.Load() != 10 {
		t.Fatalf("counts %+v, %d requests: want 5 ok iterations of 2 attempts each (one failed)", c, flaky.Load())
	}
}

// TestThrottleState: state() reports the phase's governor.
func TestThrottleState(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "state.js", `
import http from 'k6/http';
import throttle from 'k6/x/throttle';
import exec from 'k6/execution';
throttle.configure('main', { start: 5, floor: 2, window: '200ms', minAttempts: 5 });
export const options = { scenarios: { main: { executor: 'constant-arrival-rate', rate: 100, duration: '1500ms', preAllocatedVUs: 2 } } };
export default function () {
  http.get(__ENV.BASE + '/');
  if (exec.scenario.iterationInTest === 0) {
    const s = throttle.state();
    console.log(s.phase, s.mode, s.ceiling, s.offer);
  }
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add, Tick: 20 * time.Millisecond}, 30*time.Second)
	if got := out.all(); len(got) != 1 || got[0] != "main rate 100 5" {
		t.Fatalf("console %q: want the phase, its mode, ceiling and opening offer", got)
	}
	if l := r.Phases()[0].Limits(); l.Start != 5 || l.Floor != 2 || l.Window != 200*time.Millisecond || l.MinAttempts != 5 {
		t.Fatalf("limits %+v: want throttle.configure's", l)
	}
}

// TestCLIGovernanceOverridesScript: flag settings win over configure's.
func TestCLIGovernanceOverridesScript(t *testing.T) {
	path := writeScript(t, "c.js", `
import throttle from 'k6/x/throttle';
throttle.configure('default', { start: 5, floor: 2 });
export const options = { vus: 10, duration: '1s' };
export default function () {}
`)
	floor := 3.0
	r, err := Load(path, Config{Governance: Governance{Floor: &floor}})
	if err != nil {
		t.Fatal(err)
	}
	if l := r.Phases()[0].Limits(); l.Floor != 3 || l.Start != 5 || l.Ceiling != 10 {
		t.Fatalf("limits %+v: want the flag's floor, the script's start, the authored VUs as ceiling", l)
	}
	for _, bad := range []string{
		`throttle.configure('nope', { floor: 1 });`,
		`throttle.configure('default', { flor: 1 });`,
		`throttle.configure('default', { floor: 20 });`,
	} {
		p := writeScript(t, "b.js", "import throttle from 'k6/x/throttle';\n"+bad+"\nexport const options = { vus: 10, duration: '1s' };\nexport default function () {}\n")
		if _, err := Load(p, Config{}); err == nil {
			t.Errorf("%s: loaded", bad)
		}
	}
}
