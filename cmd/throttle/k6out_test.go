package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// k6Script makes 3×4 requests to the built-in target with one check at the
// top and one in a group.
const k6Script = `
import http from 'k6/http';
import { check, group } from 'k6';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 3, iterations: 4 } }, thresholds: { http_reqs: ['count==12'] } };
export default function () {
  check(http.get(__ENV.BASE + '/'), { 'status is 200': (r) => r.status === 200 });
  group('g', () => { check(__ITER, { 'even': (i) => i % 2 === 0 }); });
}
`

// TestSummaryExportFile: demo --script --summary-export writes k6's summary
// export with the script's exact counts.
func TestSummaryExportFile(t *testing.T) {
	path := writeFile(t, "k.js", k6Script)
	out := filepath.Join(t.TempDir(), "export.json")
	r := cli(t, "", nil, "demo", "--quiet", "--script", path, "--summary-export", out)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		RootGroup struct {
			Checks map[string]struct{ Passes, Fails int } `json:"checks"`
			Groups map[string]struct {
				Path   string                                 `json:"path"`
				Checks map[string]struct{ Passes, Fails int } `json:"checks"`
			} `json:"groups"`
		} `json:"root_group"`
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if c := doc.RootGroup.Checks["status is 200"]; c.Passes != 12 || c.Fails != 0 {
		t.Errorf("status is 200: %+v", c)
	}
	if g := doc.RootGroup.Groups["g"]; g.Path != "::g" || g.Checks["even"].Passes != 6 || g.Checks["even"].Fails != 6 {
		t.Errorf("group g: %+v", g)
	}
	m := doc.Metrics
	if m["http_reqs"]["count"] != 12.0 || m["iterations"]["count"] != 12.0 || m["checks"]["passes"] != 18.0 || m["checks"]["fails"] != 6.0 {
		t.Errorf("metrics %v", m)
	}
	for _, stat := range []string{"avg", "min", "med", "max", "p(90)", "p(95)"} {
		if _, ok := m["http_req_duration"][stat].(float64); !ok {
			t.Errorf("http_req_duration lacks %s: %v", stat, m["http_req_duration"])
		}
	}
	if th, _ := m["http_reqs"]["thresholds"].(map[string]any); th["count==12"] != false {
		t.Errorf("http_reqs thresholds %v", m["http_reqs"]["thresholds"])
	}
}

func TestK6FlagsBadInput(t *testing.T) {
	path := writeFile(t, "s.js", "export default function () {}\n")
	missing := filepath.Join(t.TempDir(), "no", "x.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--summary-trend-stats", "avg,mean", path}, `--summary-trend-stats: "mean": want avg, min, med, max, count or p(N)`},
		{[]string{"run", "--summary-trend-stats", "p(101)", path}, "at most 100"},
		{[]string{"run", "--summary-export", missing, path}, "does not exist"},
		{[]string{"run", "--out", "json=" + missing, path}, "does not exist"},
		{[]string{"run", "--out", "json=", path}, "give a file"},
		{[]string{"run", "--summary-export", "x.json", "--rate", "1", "http://127.0.0.1:1/"}, "--summary-export applies to a k6 script"},
		{[]string{"run", "--out", "json=x.json", "--rate", "1", "http://127.0.0.1:1/"}, "--out json=x.json is a k6 output of a script"},
		{[]string{"demo", "--summary-trend-stats", "avg"}, "--summary-trend-stats applies to a k6 script"},
		{[]string{"run", writeFile(t, "u.js", "export const options = { summaryTimeUnit: 'h' };\nexport default function () {}\n")}, "summaryTimeUnit"},
	} {
		r := cli(t, "", nil, c.args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q: want exit 2, one line containing %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestSummaryExportUnwritable: a summary export that cannot be written is
// an error after the run, exit 1, one line (/dev/full refuses every write).
func TestSummaryExportUnwritable(t *testing.T) {
	r := cli(t, "", nil, "demo", "--quiet", "--script", writeFile(t, "k.js", k6Script), "--summary-export", "/dev/full")
	if r.code != 1 || strings.Count(r.stderr, "throttle:") != 1 || !strings.Contains(r.stderr, "writing /dev/full") {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming the file", r.code, r.stderr)
	}
}

// TestHandleSummaryReplacesSummary: handleSummary's stdout replaces k6's
// summary, its files are written; an ungoverned run has no governor's section.
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
	if strings.Contains(r.stderr, "throttle report:") {
		t.Errorf("stderr %q: the script's scenarios are not governed: no governor's section", r.stderr)
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
	if _, err := os.Stat(report); r.code != 1 || !strings.Contains(r.stderr, "throttle: handleSummary: ") || !strings.Contains(r.stderr, "boom") || err != nil {
		t.Errorf("throws: exit %d, stderr %q, report %v", r.code, r.stderr, err)
	}
}

// TestK6CommandLine: k6's flags and K6_* variables reach the script's
// options (flags over variables over the script); a documented flag
// throttle does not support is refused by name, never "unknown flag";
// an ungoverned run's stdout is k6's summary alone.
func TestK6CommandLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	path := writeFile(t, "k.js", "import http from 'k6/http';\nexport const options = { iterations: 1 };\nexport default function () { http.get(__ENV.BASE + '/'); }\n")
	t.Setenv("K6_ITERATIONS", "9")
	r := cli(t, "", nil, "run", "-q", "-e", "BASE="+srv.URL, "-u", "2", "-i", "4", "--tag", "team=shop", path)
	if r.code != 0 || !strings.Contains(r.stdout, "    iterations.........................: 4 ") || strings.Contains(r.stdout, "throttle report") || strings.Contains(r.stderr, "throttle report") {
		t.Errorf("exit %d, stdout %q, stderr %q: want 4 iterations (-i over K6_ITERATIONS) and no throttle report", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", nil, "run", "-q", "-e", "BASE="+srv.URL, "--no-summary", path)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("--no-summary: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, c := range []struct{ args []string }{{[]string{"--paused"}}, {[]string{"--linger"}}, {[]string{"--http-debug=bodies"}}, {[]string{"--vus", "x"}}} {
		r := cli(t, "", nil, append(append([]string{"run"}, c.args...), path)...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, strings.SplitN(c.args[0], "=", 2)[0]) || strings.Contains(r.stderr, "unknown flag") {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and one line naming it", c.args, r.code, r.stderr)
		}
	}
	r = cli(t, "", nil, "run", "-u", "2", "--rate", "1", "http://127.0.0.1:1/")
	if r.code != 2 || !strings.Contains(r.stderr, "--vus is a k6 option; give a script") {
		t.Errorf("-u on a URL run: exit %d, stderr %q", r.code, r.stderr)
	}
}
