package script

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRedirectLoopCountsEveryRequest: a redirect loop is followed up to
// maxRedirects (k6's default 10) and then the last 3xx is the response;
// every request of the chain is one http_reqs, as in k6 (its docs: k6
// follows redirects and each request is measured), so http_reqs equals
// what the server saw.
func TestRedirectLoopCountsEveryRequest(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	path := writeScript(t, "loop.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 3 };
export default function () {
  const r = http.get(__ENV.BASE + '/loop');
  check(r, { 'last hop is the 302': (r) => r.status === 302 });
}
`)
	r, _ := runScript(t, path, srv.URL, Config{}, 20*time.Second)
	if got, sent := count(t, r, "http_reqs"), hits.Load(); got != float64(sent) || sent != 3*11 {
		t.Errorf("http_reqs %v, server saw %d: want both 3 × (1 + 10 redirects) = 33", got, sent)
	}
}
