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
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
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
	runScript(t, path, srv.URL, Config{}, 20*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/first", "/second", "/third"}; !slices.Equal(paths, want) {
		t.Errorf("server saw %v, want %v", paths, want)
	}
}
