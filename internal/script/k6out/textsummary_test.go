package k6out

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/bundle/jslib"
)

// TestJSLibTextSummaryMatchesWriteSummary: jslib's textSummary (built in,
// bundle/jslib), given handleSummary's data, prints what throttle's own
// end-of-test summary prints for the same run, but the list of crossed
// thresholds, whose values the data object does not carry.
func TestJSLibTextSummaryMatchesWriteSummary(t *testing.T) {
	inner := &script.Group{Name: "inner", Path: "::outer::inner", Checks: []script.Check{{Name: "half", Passes: 3, Fails: 3}}}
	root := &script.Group{Checks: []script.Check{{Name: "status is 200", Passes: 10}},
		Groups: []*script.Group{{Name: "outer", Path: "::outer", Groups: []*script.Group{inner}}}}
	ok := script.ThresholdResult{Threshold: script.Threshold{Source: "avg<200"}, OK: true}
	bad := script.ThresholdResult{Threshold: script.Threshold{Source: "p(95)<1"}, Value: 1.5}
	s := &script.Summary{Root: root, TrendStats: []string{"avg", "min", "max", "p(99)"}, Metrics: []script.SummaryMetric{
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
	WriteSummary(&b, s)
	want, _, _ := strings.Cut(b.String(), "\n     ✗ http_req_duration{status:200} 'p(95)<1'")

	data, err := s.DataJSON(false, false)
	if err != nil {
		t.Fatal(err)
	}
	src, ok2, err := jslib.Source("https://jslib.k6.io/k6-summary/0.0.2/index.js")
	if !ok2 || err != nil {
		t.Fatalf("k6-summary not built in: %v", err)
	}
	// The module's functions, run as a plain script.
	rt := sobek.New()
	if _, err := rt.RunString(regexp.MustCompile(`(?m)^export `).ReplaceAllString(string(src), "")); err != nil {
		t.Fatal(err)
	}
	got, err := rt.RunString(`textSummary(JSON.parse(` + "`" + string(data) + "`" + `), { indent: ' ', enableColors: false })`)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("textSummary:\n%s\nthrottle's summary:\n%s", got, want)
	}
	colored, err := rt.RunString(`textSummary(JSON.parse(` + "`" + string(data) + "`" + `), { enableColors: true })`)
	if err != nil {
		t.Fatal(err)
	}
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored.String(), "")
	if plain != want || !strings.Contains(colored.String(), "\x1b[32m✓ status is 200\x1b[0m") {
		t.Errorf("enableColors: want the same text with colours, got\n%q", colored)
	}
}
