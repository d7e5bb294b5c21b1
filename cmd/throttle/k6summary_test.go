package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
)

// TestK6SummaryLayout prints a known summary and compares it line by line.
func TestK6SummaryLayout(t *testing.T) {
	inner := &script.Group{Name: "inner", Path: "::outer::inner", Checks: []script.Check{{Name: "half", Passes: 3, Fails: 3}}}
	root := &script.Group{Checks: []script.Check{{Name: "status is 200", Passes: 10}},
		Groups: []*script.Group{{Name: "outer", Path: "::outer", Groups: []*script.Group{inner}}}}
	ok := script.ThresholdResult{OK: true}
	bad := script.ThresholdResult{Threshold: script.Threshold{Source: "p(95)<1"}, Value: 1.5}
	s := &script.Summary{Root: root, Metrics: []script.SummaryMetric{
		{MetricStats: script.MetricStats{Name: "checks", Type: script.Rate}, Stats: []script.Stat{{Name: "rate", Value: 0.8125}, {Name: "passes", Value: 13}, {Name: "fails", Value: 3}}},
		{MetricStats: script.MetricStats{Name: "data_received", Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: 1_300_000}, {Name: "rate", Value: 31_000}}},
		{MetricStats: script.MetricStats{Name: "http_req_duration", Type: script.Trend, IsTime: true},
			Stats: []script.Stat{{Name: "avg", Value: 144.56}, {Name: "min", Value: 0.0125}, {Name: "max", Value: 1350}}, Thresholds: []script.ThresholdResult{ok}},
		{MetricStats: script.MetricStats{Name: "http_req_duration{status:200}", Type: script.Trend, IsTime: true},
			Stats: []script.Stat{{Name: "avg", Value: 2}, {Name: "min", Value: 0}, {Name: "max", Value: 61000}}, Thresholds: []script.ThresholdResult{bad}},
		{MetricStats: script.MetricStats{Name: "http_reqs", Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: 180}, {Name: "rate", Value: 4.369380}}},
		{MetricStats: script.MetricStats{Name: "vus", Type: script.Gauge}, Stats: []script.Stat{{Name: "value", Value: 1}, {Name: "min", Value: 1}, {Name: "max", Value: 19}}},
		{MetricStats: script.MetricStats{Name: "wait", Type: script.Trend}, Stats: []script.Stat{{Name: "p(99)", Value: 152.3555561}}},
	}}
	var b bytes.Buffer
	if n := writeK6Summary(&b, s); n != 1 {
		t.Errorf("%d crossed, want 1", n)
	}
	want := `
     ✓ status is 200

     █ outer

       █ inner

         ✗ half
          ↳  50% — ✓ 3 / ✗ 3

     checks..............: 81.25% ✓ 13 ✗ 3
     data_received.......: 1.3 MB 31 kB/s
   ✓ http_req_duration...: avg=144.56ms min=12.5µs max=1.35s
   ✗   { status:200 }....: avg=2ms min=0s max=1m1s
     http_reqs...........: 180 4.36938/s
     vus.................: 1 min=1 max=19
     wait................: p(99)=152.355556

     ✗ http_req_duration{status:200} 'p(95)<1' (1.5)
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	s.TimeUnit = "ms"
	b.Reset()
	writeK6Summary(&b, s)
	if !strings.Contains(b.String(), "avg=144.56ms min=0.01ms max=1350ms") {
		t.Errorf("summaryTimeUnit ms:\n%s", b.String())
	}
}

// TestHandleSummaryReplacesSummary: handleSummary's stdout replaces k6's
// summary, its files are written, the governor's section moves to stderr.
func TestHandleSummaryReplacesSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.txt")
	path := writeFile(t, "h.js", strings.Replace(k6Script, "export default", `
export function handleSummary(data) {
  return { stdout: 'reqs ' + data.metrics.http_reqs.values.count + '\n', [__ENV.FILE]: 'checks ' + data.metrics.checks.values.passes };
}
export default`, 1))
	r := cli(t, "", nil, "demo", "--quiet", "--script", path, "-e", "FILE="+file)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r.stdout != "reqs 12\n" {
		t.Errorf("stdout %q: want only handleSummary's", r.stdout)
	}
	if !strings.Contains(r.stderr, "throttle report:") {
		t.Errorf("stderr %q: want the governor's section", r.stderr)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "checks 18" {
		t.Errorf("file %q, %v", b, err)
	}
	// a key that cannot be written is exit 1 after the run
	bad := writeFile(t, "b.js", strings.Replace(k6Script, "export default", "export function handleSummary() { return { '/dev/full': 'x' }; }\nexport default", 1))
	r = cli(t, "", nil, "demo", "--quiet", "--script", bad)
	if r.code != 1 || strings.Count(r.stderr, "throttle:") != 1 || !strings.Contains(r.stderr, "handleSummary: writing /dev/full") {
		t.Errorf("unwritable: exit %d, stderr %q", r.code, r.stderr)
	}
	// one that throws: exit 1 after the governor's section and the report
	report := filepath.Join(t.TempDir(), "r.json")
	throws := writeFile(t, "t.js", strings.Replace(k6Script, "export default", "export function handleSummary() { throw new Error('boom'); }\nexport default", 1))
	r = cli(t, "", nil, "demo", "--quiet", "--script", throws, "--out", report)
	if _, err := os.Stat(report); r.code != 1 || !strings.Contains(r.stderr, "throttle: handleSummary: ") || !strings.Contains(r.stderr, "boom") || !strings.Contains(r.stderr, "throttle report:") || err != nil {
		t.Errorf("throws: exit %d, stderr %q, report %v", r.code, r.stderr, err)
	}
}
