package script

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestGracefulRampDownCutsAndReusesTheVU: ramping-vus with
// gracefulRampDown 0s. At 1 s the stages fall from 2 VUs to 1: the VU
// removed is in the sleep of its second iteration (0.7 s to 1.4 s), which
// is cut off, so its request at about 1.4 s is never made; the other VU's
// is. At 2 s the stages rise to 2 again: the VU that was cut off runs
// iterations again, its requests and sleeps working as before.
func TestGracefulRampDownCutsAndReusesTheVU(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]int{} // VU → the instants (ms since setup) of its requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, _ := strconv.Atoi(r.URL.Query().Get("at"))
		mu.Lock()
		seen[r.URL.Query().Get("vu")] = append(seen[r.URL.Query().Get("vu")], at)
		mu.Unlock()
	}))
	defer srv.Close()
	path := writeScript(t, "rd.js", `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { r: { executor: 'ramping-vus', startVUs: 2, gracefulRampDown: '0s',
  stages: [{ duration: '1s', target: 2 }, { duration: '1ms', target: 1 }, { duration: '1s', target: 1 },
           { duration: '1ms', target: 2 }, { duration: '1s', target: 2 }] } } };
export function setup() { return Date.now(); }
export default function (t0) { sleep(0.7); http.get(__ENV.BASE + '/?vu=' + __VU + '&at=' + (Date.now() - t0)); }
`)
	cfg := fast()
	cfg.Fixed = true
	r, _ := runScript(t, path, srv.URL, cfg, 60*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("requests by VU %v: want 2 VUs", seen)
	}
	midway := 0 // VUs with a request between the fall and the rise
	for vu, ats := range seen {
		var mid, late bool
		for _, at := range ats {
			mid = mid || at >= 1300 && at < 1950
			late = late || at >= 2000
		}
		if mid {
			midway++
		}
		if !late {
			t.Errorf("VU %s made no request after the stages rose again: %v", vu, ats)
		}
	}
	if midway != 1 {
		t.Errorf("%d VUs made a request between 1.3 s and 1.95 s, want 1 (the removed VU's iteration is cut off): %v", midway, seen)
	}
	if c := r.Phases()[0].Counts(); c.IterFailed != 0 || c.Failed != 0 {
		t.Errorf("counts %+v: no iteration or request may fail", c)
	}
}
