package script

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A script's request timings where the raw transport reads one clock for
// two instants: an answer that comes whole in the read that brings its
// first byte shows receiving 0 (its first and last byte are one reading),
// waiting to that read, and a duration that is the sum of its parts; the
// built-in metrics get the same values, and the iteration's end is a
// reading of its own, after the request's. An answer in two parts 30 ms
// apart still ends at its last part. The bounds are on sending + waiting
// and on the duration: the reading that ends sending is taken after the
// write returns, so a VU descheduled there on a loaded machine shortens
// waiting, never the duration (its first reading precedes the write).
func TestRequestTimingsOneReading(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(25 * time.Millisecond)
		if r.URL.Path == "/split" {
			w.Header().Set("Content-Length", "4")
			w.Write([]byte("ab"))
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond)
			w.Write([]byte("cd"))
			return
		}
		w.Write([]byte("whole")) // one write of headers and body when the handler returns
	}))
	defer srv.Close()
	path := writeScript(t, "t.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 3, vus: 1 };
export default function () {
  const t = http.get(__ENV.BASE + '/').timings;
  check(t, {
    'receiving 0': (t) => t.receiving === 0,
    'waiting to the answer': (t) => t.sending + t.waiting >= 25,
    'duration is its parts': (t) => Math.abs(t.duration - (t.sending + t.waiting + t.receiving)) < 1e-6,
  });
  const s = http.get(__ENV.BASE + '/split').timings;
  check(s, { 'split ends at its last part': (s) => s.duration >= 55 });
}
`)
	r, _ := runScript(t, path, srv.URL, Config{}, 30*time.Second)
	for _, c := range r.Phases()[0].Checks() {
		if c.Pass != 3 || c.Failed != 0 {
			t.Errorf("check %q: %d passed, %d failed", c.Name, c.Pass, c.Failed)
		}
	}
	recv, wait, dur := r.metric("http_req_receiving").Stats(), r.metric("http_req_waiting").Stats(), r.metric("http_req_duration").Stats()
	it := r.metric("iteration_duration").Stats()
	if recv.Count != 6 || wait.Count != 6 || dur.Min < 25 || dur.Sum < recv.Sum+wait.Sum {
		t.Errorf("receiving %+v, waiting %+v, duration %+v", recv, wait, dur)
	}
	if it.Count != 3 || it.Sum <= dur.Sum {
		t.Errorf("iteration_duration %+v against http_req_duration %+v", it, dur)
	}
}
