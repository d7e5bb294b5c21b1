package faults

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/session"
)

// summary is k6's --summary-export: each metric's values.
type summary struct {
	Metrics map[string]map[string]float64 `json:"metrics"`
}

// runScript runs the k6 script src with cfg (a request timeout of 5 s
// unless it says otherwise) through a session, as `throttle run --out
// r.json --summary-export s.json` does, with the heap's peak bounded; it
// returns the summary export and the report, both of which must be
// written.
func runScript(t *testing.T, src string, cfg script.Config) (summary, report.Report) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.js")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	s := &session.Session{Stdout: &stdout, Stderr: io.Discard, Quiet: true,
		Outputs: session.Outputs{JSON: filepath.Join(dir, "r.json")}}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	sc := session.Script{Path: path, SummaryExport: filepath.Join(dir, "summary.json"), Config: cfg}
	stop := make(chan struct{})
	peak := heapPeak(stop)
	done := make(chan error, 1)
	go func() { done <- s.RunScript(sc) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute")
	}
	close(stop)
	if p := <-peak; p > maxHeap {
		t.Errorf("heap peaked at %d MiB", p>>20)
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	var sum summary
	var rep report.Report
	for file, v := range map[string]any{sc.SummaryExport: &sum, s.Outputs.JSON: &rep} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("not written: %v", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return sum, rep
}
