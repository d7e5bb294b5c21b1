package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/phase"
)

// A THROTTLE_WATCH_TRACE that is not a writable directory refuses the run
// (and an agent's start) with one line and exit 2, before any traffic.
func TestWatchTraceRefused(t *testing.T) {
	t.Setenv(phase.WatchTraceEnv, filepath.Join(t.TempDir(), "missing"))
	t.Cleanup(func() { t.Setenv(phase.WatchTraceEnv, ""); phase.TraceWatchFromEnv() })
	for _, args := range [][]string{
		{"run", "--rate", "10", "--duration", "1s", "http://127.0.0.1:1/"},
		{"agent", "--join", "nats://127.0.0.1:1", "--token", "x"},
	} {
		r := cli(t, "", nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, phase.WatchTraceEnv) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", args, r.code, r.stderr, phase.WatchTraceEnv)
		}
	}
}

// With a directory, a run writes its phase's ticks there.
func TestWatchTraceWritten(t *testing.T) {
	srv := httptest.NewServer(builtin(t, 500))
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv(phase.WatchTraceEnv, dir)
	t.Cleanup(func() { t.Setenv(phase.WatchTraceEnv, ""); phase.TraceWatchFromEnv() })
	r := cli(t, "", nil, "run", "--rate", "50", "--no-governor", "--duration", "1500ms", "--quiet", srv.URL+"/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "watch-*.csv"))
	if len(files) == 0 {
		t.Fatalf("no trace in %s", dir)
	}
	b, err := os.ReadFile(files[0])
	if err != nil || strings.Count(string(b), "\n") < 3 || !strings.HasPrefix(string(b), "unix_s,") {
		t.Errorf("trace %s: %v\n%s", files[0], err, b)
	}
}
