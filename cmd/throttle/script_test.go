package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// writeFile writes a script into a fresh folder and returns its path.
func writeFile(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// counting is a loopback server that counts the requests it gets.
func counting(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.Write([]byte("ok\n"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRunScriptRefusesUnsupportedModuleBeforeTraffic(t *testing.T) {
	srv, n := counting(t)
	path := writeFile(t, "browser.js", "import http from 'k6/http';\nimport { browser } from 'k6/browser';\nexport function setup() { http.get(__ENV.BASE); }\nexport default function () { browser.newPage(); }\n")
	r := cli(t, "", nil, "run", "-e", "BASE="+srv.URL, path)
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, `throttle: browser.js:2: module "k6/browser" is not supported`) {
		t.Fatalf("exit %d, stderr %q: want exit 2 and one line naming k6/browser at line 2", r.code, r.stderr)
	}
	if n.Load() != 0 {
		t.Fatalf("%d requests reached the target", n.Load())
	}
}

func TestRunScriptBadInput(t *testing.T) {
	path := writeFile(t, "s.js", "export default function () {}\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rate", "10", path}, "--rate does not apply to a k6 script"},
		{[]string{"run", path, "http://127.0.0.1:1/"}, "a k6 script runs alone"},
		{[]string{"run", "-e", "NOEQUALS", path}, `-e "NOEQUALS": want KEY=VALUE`},
		{[]string{"run", "-e", "A=1", "--rate", "1", "http://127.0.0.1:1/"}, "-e/--env fills a k6 script's __ENV"},
		{[]string{"run", filepath.Join(t.TempDir(), "missing.js")}, "missing.js"},
		{[]string{"run", writeFile(t, "bad.js", "export const options = { scenarios: { a: { executor: 'externally-controlled' } } };\nexport default function () {}\n")}, `executor "externally-controlled" is not supported`},
		{[]string{"run", writeFile(t, "syntax.js", "export default function () {\n")}, "syntax.js:"},
		{[]string{"run", "--govern", "--no-governor", path}, "--govern conflicts with --no-governor"},
		{[]string{"run", "--govern", "--rate", "1", "http://127.0.0.1:1/"}, "--govern applies to a k6 script"},
	} {
		r := cli(t, "", nil, c.args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q: want exit 2, one line containing %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestRunScriptWritesPhases: --out holds one report per scenario under
// "phases", with the first governed scenario's report at the top level.
func TestRunScriptWritesPhases(t *testing.T) {
	srv, n := counting(t)
	path := writeFile(t, "two.js", `
import http from 'k6/http';
import 'k6/x/throttle';
export const options = { scenarios: {
  warm: { executor: 'per-vu-iterations', vus: 2, iterations: 5 },
  load: { executor: 'constant-vus', vus: 4, duration: '2s', startTime: '200ms' },
} };
export default function () { http.get(__ENV.BASE + '/'); }
`)
	out := filepath.Join(t.TempDir(), "report.json")
	r := cli(t, "", nil, "run", "--quiet", "--window", "200ms", "--tick", "20ms", "-e", "BASE="+srv.URL, "--out", out, path)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var doc struct {
		Outcome  string `json:"outcome"`
		Settings struct {
			Mode     string  `json:"mode"`
			Ceiling  float64 `json:"ceiling"`
			Governed bool    `json:"governed"`
		} `json:"settings"`
		Phases []struct {
			Phase      string `json:"phase"`
			Executor   string `json:"executor"`
			Iterations struct {
				Total uint64 `json:"total"`
			} `json:"iterations"`
			Windows []json.RawMessage `json:"windows"`
		} `json:"phases"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Phases) != 2 || doc.Phases[0].Phase != "warm" || doc.Phases[1].Phase != "load" || doc.Phases[1].Executor != "constant-vus" {
		t.Fatalf("phases %+v", doc.Phases)
	}
	if doc.Phases[0].Iterations.Total != 10 || doc.Phases[1].Iterations.Total == 0 || len(doc.Phases[1].Windows) == 0 {
		t.Fatalf("phases %+v: want 10 warm iterations and a governed load phase with windows", doc.Phases)
	}
	if !doc.Settings.Governed || doc.Settings.Mode != "concurrency" || doc.Settings.Ceiling != 4 || doc.Outcome == "" {
		t.Fatalf("top level %+v: want the governed load scenario", doc)
	}
	// A governed run's own report is on stderr: stdout is k6's.
	if !strings.Contains(r.stderr, "scenario     load (constant-vus)") || !strings.Contains(r.stderr, "\nscenarios\n") ||
		strings.Contains(r.stdout, "scenario     load") {
		t.Fatalf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if n.Load() < 10 {
		t.Fatalf("%d requests", n.Load())
	}
}

// TestDemoScriptExamples runs every example script through demo --script,
// shortened through __ENV; one that imports k6/net/grpc gets the gRPC
// target (--grpc).
func TestDemoScriptExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/scripts/*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"demo", "--quiet", "--script", f, "-e", "DURATION=3s", "-e", "SPAN=1s"}
			if strings.Contains(string(src), "'k6/net/grpc'") {
				args = append(args, "--grpc")
			}
			r := cli(t, "", nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "the true capacity is 800 req/s") && !strings.Contains(r.stderr, "vs true 800 req/s") {
				t.Fatalf("stderr %q: want the found vs true line", r.stderr)
			}
		})
	}
}

// TestDemoGRPCCapacity: grpc-capacity.js finds the capacity of the gRPC
// target, which sheds with RESOURCE_EXHAUSTED above it: never above it by
// more than 15 %, and below it within TestDemo's loose band (the ±5 %
// figure is the README's, from a 30 s run at 800/s by hand). 100/s because
// script VUs under the race detector on a busy machine could not offer
// 400/s (the generator saturated near 230/s); the flags override the
// script's governor settings so that short windows settle inside the run,
// as in TestDemo.
//
// Below, the band is TestDemo's 0.3 and not 0.85: at load 7-16 on two
// cores the host stalls (generator and target share the process) bunched
// the calls, and the target's 20 ms bucket (2 calls at 100/s) shed them at
// 69-90/s, real RESOURCE_EXHAUSTED failures the governor rightly backs off
// on: found 46.6-82. And a generator that could not drive the load in 8 s
// (script VUs saturated at 25-56/s) leaves the search unsettled: then the
// report must say so and why, and claim no capacity.
func TestDemoGRPCCapacity(t *testing.T) {
	r := cli(t, "", nil, "demo", "--quiet", "--grpc", "--script", "../../examples/scripts/grpc-capacity.js", "-e", "DURATION=8s",
		"--capacity", "100", "--floor", "20", "--start", "50", "--window", "500ms", "--tick", "100ms")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	saturated := strings.Contains(r.stderr, "generator saturated")
	i := strings.Index(r.stderr, "\nfound ")
	if i < 0 {
		if !saturated || !strings.Contains(r.stderr, "no capacity found (unsettled); the true capacity is 100 req/s") {
			t.Fatalf("no found line, and no unsettled search the generator explains:\n%s", r.stderr)
		}
		return
	}
	var found, truth, dev float64
	if _, err := fmt.Sscanf(r.stderr[i+1:], "found %g req/s vs true %g req/s (%g %%)", &found, &truth, &dev); err != nil {
		t.Fatalf("found line: %v\n%s", err, r.stderr[i:])
	}
	// Tight above always: the target bounds the goodput. Below the band,
	// only a generator that could not offer the capacity, which the report
	// must then say.
	low := found < 0.3*truth && !saturated
	if truth != 100 || found > 1.15*truth || low {
		t.Errorf("found %v vs true %v (%v %%), want at most +15 %%, and at least 30 %% unless the generator saturated:\n%s", found, truth, dev, r.stderr)
	}
}

// TestDemoGRPCNeedsScript: --grpc without --script is refused in one line.
func TestDemoGRPCNeedsScript(t *testing.T) {
	r := cli(t, "", nil, "demo", "--grpc")
	if r.code != 2 || !strings.Contains(r.stderr, "--grpc applies to a k6 script") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestScriptServesMetrics: with --metrics, a script run exports each
// scenario as a phase and its custom metrics beside them, while it runs.
func TestScriptServesMetrics(t *testing.T) {
	path := writeFile(t, "m.js", `
import http from 'k6/http';
import { Counter } from 'k6/metrics';
const orders = new Counter('orders_total');
export const options = { scenarios: { shop: { executor: 'constant-vus', vus: 2, duration: '30s' } } };
export default function () { http.get(__ENV.BASE + '/'); orders.add(1); }
`)
	sig := make(chan os.Signal, 2)
	_, errb, code := started([]string{"demo", "--quiet", "--script", path, "--metrics", "127.0.0.1:0"}, sig, nil)
	url := metricsURL(t, errb, code)
	var body string
	testwait.Until(t, testwait.Deadline, "the scenario's phase and the custom counter in a scrape", func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return strings.Contains(body, `orders_total{phase="shop"}`) && strings.Contains(body, `phase="shop"`) && strings.Contains(body, "throttle_offer")
	})
	sig <- os.Interrupt
	select {
	case c := <-code:
		if c != 105 { // k6's code for a run interrupted from outside
			t.Fatalf("exit %d, want 105: %s", c, errb.String())
		}
	case <-time.After(testwait.Deadline):
		t.Fatal("the run did not end after Ctrl-C")
	}
}

// TestScriptThresholds: a crossed threshold exits 99 after the report is
// written, every threshold marked; an abortOnFail threshold ends the run
// early; thresholds that hold exit 0; a bad one is bad input.
func TestScriptThresholds(t *testing.T) {
	srv, _ := counting(t)
	script := func(thresholds, options string) string {
		return writeFile(t, "th.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { `+options+`, thresholds: { `+thresholds+` } };
export default function () { check(http.get(__ENV.BASE + '/'), { ok: (r) => r.status === 200 }); }
`)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	r := cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, "--out", out,
		script(`http_req_failed: ['rate<0.01'], checks: ['rate>0.99'], http_reqs: ['count==20'], http_req_duration: ['p(95)<0.000001']`, "iterations: 20"))
	if r.code != 99 {
		t.Fatalf("exit %d, stderr %q: want 99", r.code, r.stderr)
	}
	// k6's compact summary (the default): each metric with thresholds,
	// then each threshold marked, with the value it compared.
	for _, want := range []string{"█ THRESHOLDS", "    http_req_failed\n    ✓ 'rate<0.01' rate=0.00%\n", "    checks\n    ✓ 'rate>0.99' rate=100.00%\n",
		"    http_reqs\n    ✓ 'count==20' count=20\n", "    ✗ 'p(95)<0.000001' p(95)=", "█ TOTAL RESULTS", "    http_reqs..........................: 20 "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// --summary-mode legacy: k6's classic layout, thresholds in the margin.
	r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, "--summary-mode", "legacy",
		script(`http_req_failed: ['rate<0.01'], http_req_duration: ['p(95)<0.000001']`, "iterations: 2"))
	if r.code != 99 || !strings.Contains(r.stdout, "✓ http_req_failed....") || !strings.Contains(r.stdout, "✗ http_req_duration....") || strings.Contains(r.stdout, "█ TOTAL RESULTS") {
		t.Errorf("--summary-mode legacy: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	// full: what compact shows and the HTTP timing metrics compact leaves out.
	r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, "--summary-mode", "full", script(`http_req_failed: ['rate<0.01']`, "iterations: 2"))
	if r.code != 0 || !strings.Contains(r.stdout, "█ TOTAL RESULTS") || !strings.Contains(r.stdout, "    http_req_waiting...") {
		t.Errorf("--summary-mode full: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the report was not written before exit 99: %v", err)
	}
	start := time.Now()
	r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL,
		script(`http_req_duration: [{ threshold: 'max<0.000001', abortOnFail: true }]`, "vus: 2, duration: '1m'"))
	if r.code != 99 || time.Since(start) > 30*time.Second || !strings.Contains(r.stderr, "test aborted") {
		t.Fatalf("abortOnFail: exit %d after %v, stderr %q", r.code, time.Since(start), r.stderr)
	}
	r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, script(`http_req_failed: ['rate<0.01'], iterations: ['count>=3']`, "iterations: 3"))
	if r.code != 0 {
		t.Fatalf("thresholds that hold: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, bad := range []string{`nope: ['rate<0.01']`, `http_reqs: ['p(95)<1']`, `http_req_duration: ['fast']`, `'http_req_duration{op': ['p(95)<1']`} {
		r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, script(bad, "iterations: 1"))
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q: want exit 2 and one line", bad, r.code, r.stderr)
		}
	}
}

// TestRunScriptGovernorFlags: --early-breach and --evidence reach every
// scenario's governor and its report, as they do for a URL run.
func TestRunScriptGovernorFlags(t *testing.T) {
	srv, _ := counting(t)
	path := writeFile(t, "one.js", `
import http from 'k6/http';
export const options = { scenarios: { load: { executor: 'constant-vus', vus: 2, duration: '600ms' } } };
export default function () { http.get(__ENV.BASE + '/'); }
`)
	for _, c := range []struct {
		flags    []string
		early    bool
		evidence string
	}{
		{nil, true, "unserved,latency,drain,generator"},
		{[]string{"--early-breach=false", "--evidence", "none"}, false, "none"},
		{[]string{"--evidence", "drain"}, true, "drain"},
	} {
		out := filepath.Join(t.TempDir(), "report.json")
		args := append([]string{"run", "--govern", "--quiet", "--window", "200ms", "--tick", "20ms", "-e", "BASE=" + srv.URL, "--out", out}, c.flags...)
		r := cli(t, "", nil, append(args, path)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", c.flags, r.code, r.stderr)
		}
		var doc struct {
			Settings struct {
				EarlyBreach bool   `json:"early_breach"`
				Evidence    string `json:"evidence"`
			} `json:"settings"`
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Settings.EarlyBreach != c.early || doc.Settings.Evidence != c.evidence {
			t.Errorf("%v: settings %+v, want early_breach %v, evidence %q", c.flags, doc.Settings, c.early, c.evidence)
		}
	}
	if r := cli(t, "", nil, "run", "--evidence", "bogus", path); r.code != 2 || !strings.Contains(r.stderr, "--evidence") {
		t.Errorf("--evidence bogus: exit %d, stderr %q", r.code, r.stderr)
	}
}
