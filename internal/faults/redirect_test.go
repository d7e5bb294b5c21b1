package faults

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
)

// loop is a server whose every answer redirects to itself; it counts the
// requests it saw.
func loop(t *testing.T) (string, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/loop", &hits
}

// A redirect loop in a URL run: a URL run follows no redirect, so each
// attempt is one request, answered 302 — not a failure by the default
// rule (transport errors, timeouts, 5xx, 429) — and the server saw the
// attempts the run counted, one request each.
func TestRedirectLoopURL(t *testing.T) {
	u, hits := loop(t)
	r := runURL(t, u, 1500*time.Millisecond, 300*time.Millisecond)
	checkRun(t, r)
	minorityLate(t, r.res.Counts, engine.ClassOK)
	// One request an attempt: the server saw every ok attempt and no more
	// than were started (a timed-out one on a loaded machine may not have
	// reached it).
	if c, n := r.res.Counts, uint64(hits.Load()); n < c.OK || n > c.Started {
		t.Errorf("the server saw %d requests; the run started %d attempts, %d ok", n, c.Started, c.OK)
	}
}

// A redirect loop in a k6 script: each request follows maxRedirects (k6's
// default 10) redirects, then the last 302 is the response. Every request
// on the wire is one http_reqs, as in k6, so the summary's count is what
// the server saw: 11 per iteration. The governed run's report is written.
func TestRedirectLoopScript(t *testing.T) {
	u, hits := loop(t)
	start, window := 40.0, 500*time.Millisecond // the authored rate from the first arrival
	src := `
import http from 'k6/http';
import { check } from 'k6';
export const options = { scenarios: { loop: { executor: 'constant-arrival-rate', rate: 40, duration: '1500ms', preAllocatedVUs: 20 } } };
export default function () {
  check(http.get(__ENV.URL), { 'the last hop is a 302': (r) => r.status === 302 });
}
`
	sum, _ := runScript(t, src, script.Config{Env: map[string]string{"URL": u}, Govern: true,
		Governance: script.Governance{Start: &start, Window: &window}})
	reqs, iters, checks := sum.Metrics["http_reqs"]["count"], sum.Metrics["iterations"]["count"], sum.Metrics["checks"]
	t.Logf("%v iterations, %v http_reqs, the server saw %d, checks %v", iters, reqs, hits.Load(), checks)
	if iters < 20 || reqs != float64(hits.Load()) || reqs != 11*iters || checks["fails"] != 0 {
		t.Errorf("%v iterations, %v http_reqs, server saw %d, checks %v: want 11 requests an iteration, each counted, every check passed",
			iters, reqs, hits.Load(), checks)
	}
}
