package k6out

import (
	"bytes"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
)

// TestK6SummaryLayout prints a known summary and compares it line by line.
func TestK6SummaryLayout(t *testing.T) {
	ok := script.ThresholdResult{OK: true}
	s := sampleSummary(ok)
	s.Mode = "legacy"
	var b bytes.Buffer
	if n := WriteSummary(&b, s); n != 1 {
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
	WriteSummary(&b, s)
	if !strings.Contains(b.String(), "avg=144.56ms min=0.01ms max=1350ms") {
		t.Errorf("summaryTimeUnit ms:\n%s", b.String())
	}
}

// sampleSummary is a run's summary with nested groups, a failing check, one
// metric of every type, a sub-metric and a threshold crossed on it; ok is
// the result of http_req_duration's own threshold.
func sampleSummary(ok script.ThresholdResult) *script.Summary {
	inner := &script.Group{Name: "inner", Path: "::outer::inner", Checks: []script.Check{{Name: "half", Passes: 3, Fails: 3}}}
	root := &script.Group{Checks: []script.Check{{Name: "status is 200", Passes: 10}},
		Groups: []*script.Group{{Name: "outer", Path: "::outer", Groups: []*script.Group{inner}}}}
	bad := script.ThresholdResult{Threshold: script.Threshold{Source: "p(95)<1"}, Value: 1.5}
	return &script.Summary{Root: root, Metrics: []script.SummaryMetric{
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
}
