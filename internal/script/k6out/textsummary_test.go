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
	s := sampleSummary(script.ThresholdResult{Threshold: script.Threshold{Source: "avg<200"}, OK: true})
	s.TrendStats = []string{"avg", "min", "max", "p(99)"}
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
