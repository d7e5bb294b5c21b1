package k6out

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// docSummary is the run of the compact example in k6's documentation
// (results-output/end-of-test): 45 iterations of 2 checks, a custom trend
// and a threshold on http_req_failed, over 6.858 s; plus a hidden HTTP
// timing metric and a check in a group, for full mode.
func docSummary(mode string) *script.Summary {
	trend := func(name string, isTime bool, avg, min, med, max, p90, p95 float64) script.SummaryMetric {
		return script.SummaryMetric{MetricStats: script.MetricStats{Name: name, Type: script.Trend, IsTime: isTime},
			Stats: []script.Stat{{Name: "avg", Value: avg}, {Name: "min", Value: min}, {Name: "med", Value: med}, {Name: "max", Value: max}, {Name: "p(90)", Value: p90}, {Name: "p(95)", Value: p95}}}
	}
	counter := func(name string, n, rate float64) script.SummaryMetric {
		return script.SummaryMetric{MetricStats: script.MetricStats{Name: name, Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: n}, {Name: "rate", Value: rate}}}
	}
	gauge := func(name string) script.SummaryMetric {
		return script.SummaryMetric{MetricStats: script.MetricStats{Name: name, Type: script.Gauge}, Stats: []script.Stat{{Name: "value", Value: 1}, {Name: "min", Value: 1}, {Name: "max", Value: 1}}}
	}
	dur := trend("http_req_duration", true, 140.36, 119.08, 140.96, 154.63, 146.88, 148.21)
	dur.Thresholds = []script.ThresholdResult{
		{Threshold: script.Threshold{Source: "p(95)<1500"}, Value: 148.21, OK: true},
		{Threshold: script.Threshold{Source: "p(90)<2000"}, Value: 146.88, OK: true},
	}
	expected := trend("http_req_duration{expected_response:true}", true, 140.36, 119.08, 140.96, 154.63, 146.88, 148.21)
	failed := script.SummaryMetric{MetricStats: script.MetricStats{Name: "http_req_failed", Type: script.Rate},
		Stats:      []script.Stat{{Name: "rate", Value: 0}, {Name: "passes", Value: 0}, {Name: "fails", Value: 45}},
		Thresholds: []script.ThresholdResult{{Threshold: script.Threshold{Source: "rate<0.01"}, Value: 0, OK: true}}}
	checks := script.SummaryMetric{MetricStats: script.MetricStats{Name: "checks", Type: script.Rate},
		Stats: []script.Stat{{Name: "rate", Value: 1}, {Name: "passes", Value: 90}, {Name: "fails", Value: 0}}}
	group := &script.Group{Name: "login", Path: "::login", Checks: []script.Check{{Name: "logged in", Passes: 2, Fails: 2}}}
	root := &script.Group{Checks: []script.Check{{Name: "test-api.k6.io is up", Passes: 45}, {Name: "status is 200", Passes: 45}}, Groups: []*script.Group{group}}
	return &script.Summary{Mode: mode, Root: root, Duration: 6858617003 * time.Nanosecond, Metrics: []script.SummaryMetric{
		checks,
		trend("custom_waiting_time", false, 152.355556, 120, 141, 684, 147.2, 148.8),
		{MetricStats: script.MetricStats{Name: "data_received", Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: 519_000}, {Name: "rate", Value: 76_000}}},
		{MetricStats: script.MetricStats{Name: "data_sent", Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: 4_900}, {Name: "rate", Value: 718}}},
		trend("http_req_blocked", true, 1, 0.5, 1, 2, 1.5, 1.8),
		dur, expected, failed,
		counter("http_reqs", 45, 6.56109),
		trend("iteration_duration", true, 152.38, 119.37, 141.27, 684.62, 147.11, 148.39),
		counter("iterations", 45, 6.56109),
		gauge("vus"), gauge("vus_max"),
	}}
}

// TestCompactSummaryLayout: the compact layout of k6's documented example,
// column for column (the checks' rate per second is the run's).
func TestCompactSummaryLayout(t *testing.T) {
	var b bytes.Buffer
	if n := WriteSummary(&b, docSummary("compact")); n != 0 {
		t.Errorf("%d crossed, want 0", n)
	}
	want := `
  █ THRESHOLDS

    http_req_duration
    ✓ 'p(95)<1500' p(95)=148.21ms
    ✓ 'p(90)<2000' p(90)=146.88ms

    http_req_failed
    ✓ 'rate<0.01' rate=0.00%


  █ TOTAL RESULTS

    checks_total.......................: 90      13.122179/s
    checks_succeeded...................: 100.00% 90 out of 90
    checks_failed......................: 0.00%   0 out of 90

    ✓ test-api.k6.io is up
    ✓ status is 200

    CUSTOM
    custom_waiting_time................: avg=152.355556 min=120      med=141      max=684      p(90)=147.2    p(95)=148.8

    HTTP
    http_req_duration..................: avg=140.36ms   min=119.08ms med=140.96ms max=154.63ms p(90)=146.88ms p(95)=148.21ms
      { expected_response:true }.......: avg=140.36ms   min=119.08ms med=140.96ms max=154.63ms p(90)=146.88ms p(95)=148.21ms
    http_req_failed....................: 0.00%  0 out of 45
    http_reqs..........................: 45     6.56109/s

    EXECUTION
    iteration_duration.................: avg=152.38ms   min=119.37ms med=141.27ms max=684.62ms p(90)=147.11ms p(95)=148.39ms
    iterations.........................: 45     6.56109/s
    vus................................: 1      min=1       max=1
    vus_max............................: 1      min=1       max=1

    NETWORK
    data_received......................: 519 kB 76 kB/s
    data_sent..........................: 4.9 kB 718 B/s
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestFullSummaryLayout: full adds the metrics compact leaves out, each
// group's checks and each scenario's metrics; a crossed threshold is
// marked and counted.
func TestFullSummaryLayout(t *testing.T) {
	s := docSummary("full")
	s.Scenarios = []script.ScenarioSummary{{Name: "browse", Metrics: []script.SummaryMetric{
		{MetricStats: script.MetricStats{Name: "iterations", Type: script.Counter}, Stats: []script.Stat{{Name: "count", Value: 7}, {Name: "rate", Value: 1.5}}},
	}}}
	for i := range s.Metrics {
		if s.Metrics[i].Name == "http_req_failed" {
			s.Metrics[i].Thresholds[0].OK = false
		}
	}
	var b bytes.Buffer
	if n := WriteSummary(&b, s); n != 1 {
		t.Errorf("%d crossed, want 1", n)
	}
	out := b.String()
	for _, want := range []string{
		"    ✗ 'rate<0.01' rate=0.00%\n",
		"    HTTP\n    http_req_blocked...................: avg=1ms        min=500µs    med=1ms      max=2ms      p(90)=1.5ms    p(95)=1.8ms\n",
		"  █ GROUP: login\n\n    ✗ logged in\n     ↳  50% — ✓ 2 / ✗ 2\n",
		"\n  █ SCENARIO: browse\n\n    EXECUTION\n    iterations.........................: 7 1.5/s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("full summary lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	WriteSummary(&b, docSummary("compact"))
	for _, lack := range []string{"http_req_blocked", "GROUP", "logged in", "SCENARIO"} {
		if strings.Contains(b.String(), lack) {
			t.Errorf("compact summary shows %q:\n%s", lack, b.String())
		}
	}
}
