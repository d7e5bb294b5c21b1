package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

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
	_, errb, code := started([]string{"run", "--concurrency", "4", "--no-governor", "--grace", "1m", "--timeout", "1m",
		"--duration", "1m", "--out", out, srv.URL}, sig, nil)
	testwait.Until(t, testwait.Deadline, "4 requests in flight", func() bool { return arrived.Load() >= 4 })
	sig <- os.Interrupt
	testwait.Until(t, testwait.Deadline, "the command to take the first interrupt", func() bool { return errb.Contains("interrupted: no new arrivals") })
	sig <- os.Interrupt
	// The grace is a minute: ending well inside the wait is the second
	// signal's doing. Attempts were cut off: k6's 105, not 0.
	if c := exited(t, code, "the second signal to cut the grace period short"); c != 105 {
		t.Fatalf("exit %d, want 105: %s", c, errb.String())
	}
	if !errb.Contains("4 attempt(s) cut off in flight") {
		t.Errorf("stderr: %s", errb.String())
	}
	if !errb.Contains("aborting in-flight attempts") {
		t.Errorf("stderr: %s", errb.String())
	}
	m := readJSON(t, out)
	if m["aborted_attempts"].(float64) != 4 || m["run"].(map[string]any)["interrupted"] != true {
		t.Errorf("aborted %v, run %v", m["aborted_attempts"], m["run"])
	}
	if v, _ := m["verdict"].(string); !strings.Contains(v, "4 attempts aborted in flight") {
		t.Errorf("verdict %q does not count the aborted attempts", v)
	}
}
