package session

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A script run's timeline streams the top scenario's windows to its spool
// as they close, as a URL run's does: the spool has every window the
// timeline file then lists (a run past KeepWindows windows writes its
// timeline from there), and the spool's file is gone after the run.
func TestScriptTimelineStreamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.js")
	// The first scenario is not governed (a per-vu-iterations one, as
	// authored): the timeline is the governed second one's.
	src := `import http from 'k6/http';
import 'k6/x/throttle';
export const options = { scenarios: {
  warm: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'warm' },
  load: { executor: 'constant-arrival-rate', rate: 400, timeUnit: '1s', duration: '1500ms', preAllocatedVUs: 4, maxVUs: 20 },
} };
export function warm() {}
export default function () { http.get(__ENV.BASE + '/'); }
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	timeline := filepath.Join(dir, "t.csv")
	spooled := -1
	s := &Session{Stdout: &testwait.Buffer{}, Stderr: &testwait.Buffer{}, Quiet: true, Outputs: Outputs{Timeline: timeline}}
	s.spooled = func(sp *report.Spool) { spooled = sp.Len() }
	window := 150 * time.Millisecond
	cfg := script.Config{Env: map[string]string{"BASE": srv.URL}, Tick: 25 * time.Millisecond, Governance: script.Governance{Window: &window}}
	if err := s.RunScript(Script{Path: path, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(timeline)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if windows := len(rows) - 1; windows < 2 || spooled != windows {
		t.Fatalf("the spool had %d windows, the timeline %d: want the same, at least 2", spooled, windows)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".throttle-timeline-*"))
	if len(left) != 0 {
		t.Fatalf("spool files left behind: %v", left)
	}
}
