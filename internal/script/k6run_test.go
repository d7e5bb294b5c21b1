package script

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script/options"
)

// count is a metric's count (a Counter's sum), 0 if it has no values.
func count(t *testing.T, r *Runner, name string) float64 {
	t.Helper()
	m := r.metric(name)
	if m == nil {
		return 0
	}
	st := m.Stats()
	if m.Type == Counter {
		return st.Sum
	}
	return float64(st.Count)
}

// TestTrendOfIntegersIsExact: a trend's percentiles are exact while its
// values are kept, as k6's: the median of 5, 6, 7 is 6, not the
// histogram's 6.003.
func TestTrendOfIntegersIsExact(t *testing.T) {
	var ms metrics
	m, err := ms.get("t", Trend, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{7, 5, 6} {
		if err := m.add("p", v); err != nil {
			t.Fatal(err)
		}
	}
	if st := m.Stats(); st.Med != 6 || st.P90 != 6.8 || m.Quantile(100) != 7 {
		t.Errorf("med %v p(90) %v max %v: want 6, 6.8, 7", st.Med, st.P90, m.Quantile(100))
	}
	for i := 0; i <= exactValues; i++ {
		_ = m.add("p", 1000)
	}
	if q := m.Quantile(50); q < 999 || q > 1001 {
		t.Errorf("past %d values the histogram's median %v: want about 1000", exactValues, q)
	}
}

// TestLifecycleAsK6: setup's and teardown's requests and checks count;
// exec.test.fail() lets the run go on and marks it failed; short runs
// still have vus and vus_max. The run's first iteration (whichever VU takes
// it) calls fail: shared-iterations does not promise any VU an iteration,
// and under load one VU may take all four.
func TestLifecycleAsK6(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	path := writeScript(t, "life.js", `
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { vus: 2, iterations: 4 };
export function setup() { check(http.get(__ENV.BASE + '/setup'), { 'setup ok': (r) => r.status === 200 }); }
export default function () {
  http.get(__ENV.BASE + '/');
  if (exec.scenario.iterationInTest === 0) exec.test.fail('marked');
}
export function teardown() { check(http.get(__ENV.BASE + '/teardown'), { 'teardown ok': (r) => r.status === 200 }); }
`)
	r, res := runScript(t, path, srv.URL, Config{}, 20*time.Second)
	if got := count(t, r, "http_reqs"); got != 6 {
		t.Errorf("http_reqs %v: want 1 + 4 + 1", got)
	}
	if got := count(t, r, "checks"); got != 2 {
		t.Errorf("checks %v: want setup's and teardown's", got)
	}
	if got := count(t, r, "iterations"); got != 4 || !res.MarkedFailed || res.Aborted {
		t.Errorf("iterations %v, marked failed %v, aborted %v: want 4, true, false", got, res.MarkedFailed, res.Aborted)
	}
	if r.metric("vus_max").Stats().Last != 2 || r.metric("vus").Stats().Count == 0 {
		t.Errorf("vus_max %+v vus %+v: want vus_max 2 and vus sampled", r.metric("vus_max").Stats(), r.metric("vus").Stats())
	}
	var root int
	for _, g := range []*Group{r.Summary(time.Second).Root} {
		root = len(g.Checks)
	}
	if root != 2 {
		t.Errorf("summary's root group has %d checks: want setup's and teardown's", root)
	}
}

// TestAbortAndTimeouts: exec.test.abort() ends the run as aborted by the
// script, teardown still runs; a setup over setupTimeout fails the run
// before any iteration; an exception in the init context is an InitError.
func TestAbortAndTimeouts(t *testing.T) {
	base, hits := pathRecorder(t)
	path := writeScript(t, "abort.js", `
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { iterations: 5 };
export default function () { http.get(__ENV.BASE + '/it'); exec.test.abort('enough'); }
export function teardown() { http.get(__ENV.BASE + '/teardown'); }
`)
	_, res := runScript(t, path, base, Config{}, 20*time.Second)
	if !res.AbortedByScript || strings.Join(hits(), " ") != "/it /teardown" {
		t.Errorf("aborted by script %v, server saw %v: want true, one iteration then teardown", res.AbortedByScript, hits())
	}

	slow := writeScript(t, "slow.js", `
import { sleep } from 'k6';
export const options = { iterations: 1, setupTimeout: '200ms' };
export function setup() { sleep(10); }
export default function () {}
`)
	r, err := Load(slow, Config{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "setupTimeout") || time.Since(start) > 8*time.Second {
		t.Errorf("setup over its timeout: %v after %v", err, time.Since(start))
	}
	if n := count(t, r, "iterations"); n != 0 {
		t.Errorf("%v iterations after setup timed out", n)
	}

	hs := writeScript(t, "hs.js", `
import { sleep } from 'k6';
export const options = { iterations: 1, handleSummaryTimeout: '200ms' };
export default function () {}
export function handleSummary() { sleep(10); return {}; }
`)
	_, res = runScript(t, hs, "", Config{}, 20*time.Second)
	if res.SummaryErr == nil || !strings.Contains(res.SummaryErr.Error(), "handleSummaryTimeout") {
		t.Errorf("handleSummary over its timeout: %v", res.SummaryErr)
	}

	_, err = Load(writeScript(t, "init.js", "throw new Error('broken init');\nexport default function () {}\n"), Config{})
	var ie *InitError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "broken init") {
		t.Errorf("init exception: %v, want an InitError", err)
	}
}

// TestRequestOptions: userAgent, maxRedirects, discardResponseBodies,
// options.tags with --tag over them, and hosts reach the requests.
func TestRequestOptions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		if q.URL.Path == "/redirect" {
			http.Redirect(w, q, "/", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(q.UserAgent() + "|" + q.Host))
	}))
	t.Cleanup(srv.Close)
	path := writeScript(t, "opts.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  iterations: 1, userAgent: 'agent/1', maxRedirects: 0, discardResponseBodies: true,
  tags: { team: 'shop' }, hosts: { 'shop.test': __ENV.ADDR },
  thresholds: { 'http_reqs{env:ci}': ['count==3'], 'http_reqs{team:shop}': ['count==0'] },
};
export default function () {
  check(http.get(__ENV.BASE + '/', { responseType: 'text' }), { 'agent': (r) => r.body.startsWith('agent/1|') });
  check(http.get(__ENV.BASE + '/redirect'), { 'not followed': (r) => r.status === 302, 'discarded': (r) => r.body === null });
  check(http.get('http://shop.test/', { responseType: 'text' }), { 'hosts': (r) => r.body === 'agent/1|shop.test' });
}
`)
	var cli options.Flags
	if err := cli.Set("tag", "env=ci"); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	r, _ := runScript(t, path, srv.URL, Config{CLIOptions: cli, Env: map[string]string{"ADDR": addr}}, 20*time.Second)
	for _, c := range r.Summary(time.Second).Root.Checks {
		if c.Fails != 0 {
			t.Errorf("check %q failed", c.Name)
		}
	}
	for _, th := range r.Thresholds() {
		if !th.OK {
			t.Errorf("threshold %s %s: %v", th.Metric, th.Source, th.Value)
		}
	}
}
