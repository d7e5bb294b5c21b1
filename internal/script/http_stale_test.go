package script

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBadParamsDoNotResendPreviousRequest: a request whose params throw (a
// timeout that is no duration) is never sent, and the VU's next request
// goes to its own URL, not the one before it (the engine reuses its wire
// request when handed the same *Request twice in a row).
func TestBadParamsDoNotResendPreviousRequest(t *testing.T) {
	base, paths := pathRecorder(t)
	path := writeScript(t, "stale.js", `
import http from 'k6/http';
export const options = { iterations: 1 };
export default function () {
  http.get(__ENV.BASE + '/first');
  try { http.get(__ENV.BASE + '/bad', { timeout: 'not-a-duration' }); } catch (e) {}
  http.get(__ENV.BASE + '/second');
  try { http.post(__ENV.BASE + '/bad', 'x', { responseType: 'nope' }); } catch (e) {}
  http.get(__ENV.BASE + '/third');
}
`)
	runScript(t, path, base, Config{}, 20*time.Second)
	if want := []string{"/first", "/second", "/third"}; !slices.Equal(paths(), want) {
		t.Errorf("server saw %v, want %v", paths(), want)
	}
}

// pathRecorder is a server that answers 200 to everything; paths are the
// paths it saw, in order.
func pathRecorder(t *testing.T) (base string, paths func() []string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
