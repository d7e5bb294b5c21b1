package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// A second Ctrl-C aborts in-flight attempts at once instead of waiting out
// the grace period, and the report is still written. The first comes once
// all four requests are in flight, the second once the first has stopped the
// phase.
func TestSecondSignalAborts(t *testing.T) {
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	sig := make(chan os.Signal, 2)
	first := interruptWhen(t, sig, "4 requests in flight", func() bool { return arrived.Load() >= 4 })
	interruptWhen(t, sig, "the command to take the first interrupt", func() bool {
		select {
		case <-first:
			return len(sig) == 0
		default:
			return false
		}
	})
	begin := time.Now()
	r := cli(t, "", sig, "run", "--concurrency", "4", "--no-governor", "--grace", "1m", "--timeout", "1m",
		"--duration", "1m", "--out", out, srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if took := time.Since(begin); took > testwait.Deadline {
		t.Errorf("took %v: the second signal must cut the grace period short", took)
	}
	if !strings.Contains(r.stderr, "aborting in-flight attempts") {
		t.Errorf("stderr: %s", r.stderr)
	}
	m := readJSON(t, out)
	if m["aborted_attempts"].(float64) != 4 || m["run"].(map[string]any)["interrupted"] != true {
		t.Errorf("aborted %v, run %v", m["aborted_attempts"], m["run"])
	}
}
