package script

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A body past Config.BodyLimit fails its request with error_code 1601 and
// no body; responseType 'none' and options.discardResponseBodies keep no
// body but still the headers, whatever the body's size.
func TestBodyLimit(t *testing.T) {
	big := make([]byte, 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Size", "big")
		w.Write(big)
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name, options, checks string
	}{
		{"limit", `{ iterations: 1 }`, `
  check(http.get(B), { 'past the limit': (r) => r.status === 0 && r.error_code === 1601 && r.body === null && r.error.includes('body limit') });
  check(http.get(B, { responseType: 'none' }), { 'none keeps headers': (r) => r.status === 200 && r.body === null && r.headers['X-Size'] === 'big' });`},
		{"discard", `{ iterations: 1, discardResponseBodies: true }`, `
  check(http.get(B), { 'discarded': (r) => r.status === 200 && r.body === null && r.headers['X-Size'] === 'big' });
  check(http.get(B, { responseType: 'text' }), { 'asked for text': (r) => r.error_code === 1601 });`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "body.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = `+c.options+`;
export default function () {
  const B = __ENV.BASE;`+c.checks+`
}
`)
			r, _ := runScript(t, path, srv.URL, Config{BodyLimit: 32 << 10}, 30*time.Second)
			checks := r.Phases()[0].Checks()
			if len(checks) != 2 {
				t.Fatalf("%d checks ran, want 2", len(checks))
			}
			for _, ck := range checks {
				if ck.Failed != 0 || ck.Pass != 1 {
					t.Errorf("check %q: %d passed, %d failed", ck.Name, ck.Pass, ck.Failed)
				}
			}
		})
	}
}
