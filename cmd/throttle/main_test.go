package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/testwait"
)

// fasthttp's idle-connection cleaner outlives a closed client by up to its
// idle timeout; it holds nothing and exits by itself.
func TestMain(m *testing.M) {
	if os.Getenv(asThrottle) == "1" {
		// A real throttle process: the signal tests (process_test.go) and
		// the agents --local-agents spawns run this program as throttle.
		main()
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}

type result struct {
	code           int
	stdout, stderr string
}

// cli runs the command line in-process.
func cli(t *testing.T, stdin string, sig <-chan os.Signal, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, signals: sig})
	return result{code, out.String(), errb.String()}
}

func TestHelp(t *testing.T) {
	runFlags := []string{"--env", "script.js", "--url", "--targets", "--method", "--header", "--body", "--rate", "--concurrency", "--duration",
		"--max-vus", "--timeout", "--tries", "--fail-on", "--start", "--floor", "--high", "--low", "--window",
		"--min-attempts", "--tick", "--settle", "--early-breach", "--evidence", "--grace", "--no-governor", "--govern", "Target flags:", "Load flags:", "Governor flags:", "k6 script flags:", "Output flags:", "--insecure", "--http2", "--slow", "--out", "--timeline", "--chart", "--quiet", "--verbose", "--metrics", "--summary-export", "--summary-trend-stats", "json=FILE",
		"Agents flags:", "--agents", "--local-agents", "--listen", "--token", "--agent-wait", "--tls-cert", "--tls-key", "--tls-ca"}
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{"Usage:", "Examples:", "run", "agent", "demo", "target", "version", "Exit codes"}},
		{[]string{"--help"}, []string{"Usage:", "Examples:"}},
		{[]string{"run", "--help"}, append([]string{"Examples:", "throttle run --rate"}, runFlags...)},
		{[]string{"help", "run"}, []string{"Examples:", "--rate"}},
		{[]string{"demo", "--help"}, []string{"Examples:", "throttle demo", "--capacity", "--model", "--latency", "--out", "--chart", "--metrics", "--script"}},
		{[]string{"target", "--help"}, []string{"Examples:", "throttle target", "--capacity", "--model", "--latency", "--listen", "collapse", "--metrics"}},
		{[]string{"version", "--help"}, []string{"Examples:", "throttle version"}},
		{[]string{"agent", "--help"}, []string{"Examples:", "throttle agent --join", "--join", "--token", "--name", "--wait", "THROTTLE_TOKEN", "--tls-ca"}},
	}
	for _, c := range cases {
		r := cli(t, "", nil, c.args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", c.args, r.code, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: help lacks %q", c.args, w)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	r := cli(t, "", nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "throttle dev (go") {
		t.Fatalf("%+v", r)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("GET http://127.0.0.1:1/\nno colon here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte("GET http://127.0.0.1:1/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := "http://127.0.0.1:1/"
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"run", u}, "", "give --rate N"},
		{[]string{"run", "--rate", "10", "--concurrency", "2", u}, "", "--rate and --concurrency conflict"},
		{[]string{"run", "--rate", "x", u}, "", `invalid argument "x" for "--rate" flag: invalid syntax`},
		{[]string{"run", "--rate", "-5", u}, "", "--rate must be a number > 0"},
		{[]string{"run", "--rate", "NaN", u}, "", "--rate must be a number > 0"},
		{[]string{"run", "--concurrency", "2.5", u}, "", "--concurrency must be a whole number"},
		{[]string{"run", "--rate", "5", "--floor", "10", u}, "", "--floor (10) must be <= --rate (5)"},
		{[]string{"run", "--rate", "50", "--start", "60", u}, "", "--start (60) must be <= --rate (50)"},
		{[]string{"run", "--rate", "50", "--floor", "0", u}, "", "--floor must be > 0"},
		{[]string{"run", "--rate", "50", "--high", "1.5", u}, "", "--high must be in (0, 1)"},
		{[]string{"run", "--rate", "50", "--high", "0", u}, "", "--high must be in (0, 1)"},
		{[]string{"run", "--rate", "50", "--high", "5", u}, "", "--high must be in (0, 1), got 5"},
		{[]string{"run", "--rate", "50", "--high", "5x", u}, "", `invalid argument "5x" for "--high" flag: want a fraction such as 0.05 or a percentage such as 5%`},
		{[]string{"run", "--rate", "50", "--high", "10%", "--low", "10%", u}, "", "--low (0.1) must be < --high (0.1)"},
		{[]string{"run", "--rate", "50", "--low", "0.2", u}, "", "--low (0.2) must be < --high (0.05)"},
		{[]string{"run", "--rate", "50", "--window", "0s", u}, "", "--window must be > 0"},
		{[]string{"run", "--rate", "50", "--min-attempts", "0", u}, "", "--min-attempts must be > 0"},
		{[]string{"run", "--rate", "50", "--tick", "0s", u}, "", "--tick must be > 0"},
		{[]string{"run", "--rate", "50", "--tick", "1ns", u}, "", "--tick must be at least 1ms"},
		{[]string{"run", "--rate", "50", "--tick", "10s", u}, "", "--tick (10s) must be at most half of --window (5s)"},
		{[]string{"run", "--rate", "50", "--tick", "2600ms", u}, "", "--tick (2.6s) must be at most half of --window (5s)"},
		{[]string{"run", "--rate", "50", "--window", "1s", "--tick", "600ms", u}, "", "--tick (600ms) must be at most half of --window (1s)"},
		{[]string{"run", "--rate", "50", "--settle", "-1s", u}, "", "--settle must be >= 0"},
		{[]string{"run", "--rate", "50", "--evidence", "unserved,vibes", u}, "", `--evidence "unserved,vibes": want a comma-separated list`},
		{[]string{"run", "--rate", "50", "--duration", "-1s", u}, "", "--duration must be >= 0"},
		{[]string{"run", "--rate", "50", "--duration", "soon", u}, "", `invalid argument "soon" for "-d, --duration"`},
		{[]string{"run", "--rate", "50", "--max-vus", "0", u}, "", "--max-vus must be >= 1"},
		{[]string{"run", "--concurrency", "5", "--max-vus", "10", u}, "", "--max-vus bounds the open-loop (--rate) pool"},
		{[]string{"run", "--rate", "50", "--timeout", "0s", u}, "", "--timeout must be > 0"},
		{[]string{"run", "--rate", "50", "--tries", "0", u}, "", "--tries must be >= 1"},
		{[]string{"run", "--rate", "50", "--slow", "-1s", u}, "", "--slow must be >= 0"},
		{[]string{"run", "--rate", "50", "--grace", "-1s", u}, "", "--grace must be >= 0"},
		{[]string{"run", "--rate", "50", "--fail-on", "bogus", u}, "", `unknown --fail-on term "bogus"`},
		{[]string{"run", "--rate", "50", "--fail-on", ",", u}, "", "--fail-on names nothing"},
		{[]string{"run", "--rate", "50", "--fail-on", "600", u}, "", `unknown --fail-on term "600"`},
		{[]string{"run", "--rate", "50", "--no-governor", "--floor", "5", u}, "", "--floor conflicts with --no-governor"},
		{[]string{"run", "--rate", "50"}, "", "no target"},
		{[]string{"run", "--rate", "50", "localhost:8080"}, "", `URL "localhost:8080": scheme must be http or https`},
		{[]string{"run", "--rate", "50", "http://[::1"}, "", `malformed URL "http://[::1"`},
		{[]string{"run", "--rate", "50", "--url", "http://"}, "", `URL "http://" has no host`},
		{[]string{"run", "--rate", "50", "--method", "get", u}, "", `method "get"`},
		{[]string{"run", "--rate", "50", "-H", "nocolon", u}, "", "-H: header line \"nocolon\" has no colon"},
		{[]string{"run", "--rate", "50", "--body", "@" + filepath.Join(dir, "missing.json"), u}, "", "--body @" + filepath.Join(dir, "missing.json") + ": no such file"},
		{[]string{"run", "--rate", "50", "--targets", filepath.Join(dir, "missing.txt")}, "", "targets file: open " + filepath.Join(dir, "missing.txt")},
		{[]string{"run", "--rate", "50", "--targets", bad}, "", bad + ":2: header line \"no colon here\" has no colon"},
		{[]string{"run", "--rate", "50", "--targets", "-"}, "DELETE\n", "stdin:1: request line \"DELETE\": want METHOD URL"},
		{[]string{"run", "--rate", "50", "--targets", "-"}, "", "stdin: no targets"},
		{[]string{"run", "--rate", "50", "--targets", good, u}, "", "--targets conflicts with URLs"},
		{[]string{"run", "--rate", "50", "--targets", good, "--method", "POST"}, "", "--method applies to URL targets"},
		{[]string{"run", "--rate", "50", "--chart", filepath.Join(dir, "c.pdf"), u}, "", "want a .svg, .png or .html file"},
		{[]string{"run", "--rate", "50", "--out", filepath.Join(dir, "nope", "r.json"), u}, "", "does not exist"},
		{[]string{"run", "--rate", "50", "--timeline", dir, u}, "", "is a directory"},
		{[]string{"run", "--bogus"}, "", "unknown flag: --bogus"},
		{[]string{"bogus"}, "", `unknown command "bogus"`},
		{[]string{"version", "extra"}, "", "unknown command \"extra\""},
		{[]string{"demo", "--capacity", "0"}, "", "capacity must be > 0"},
		{[]string{"demo", "--model", "fragile"}, "", `unknown model "fragile"`},
		{[]string{"demo", "--latency", "-1s"}, "", "latency must be >= 0"},
		{[]string{"demo", "--rate", "5", "--floor", "20"}, "", "--floor (20) must be <= --rate (5)"},
		{[]string{"target", "--capacity", "-1"}, "", "capacity must be > 0"},
		{[]string{"target", "--concurrent", "--capacity", "2.5"}, "", "whole number"},
		{[]string{"target", "--listen", "0.0.0.0:0"}, "", "--listen 0.0.0.0:0"},
		{[]string{"target", "--listen", "nonsense"}, "", "--listen nonsense"},
		{[]string{"run", "--rate", "50", "--metrics", "9100", u}, "", `--metrics 9100: address "9100": want HOST:PORT or :PORT`},
		{[]string{"run", "--rate", "50", "--metrics", "127.0.0.1:x", u}, "", "--metrics 127.0.0.1:x: address \"127.0.0.1:x\": the port must be a number"},
		{[]string{"demo", "--metrics", ":70000"}, "", "the port must be a number from 0 to 65535"},
		{[]string{"target", "--metrics", "[::1"}, "", `--metrics [::1: address "[::1"`},
	}
	for _, c := range cases {
		r := cli(t, c.stdin, nil, c.args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, r.code, r.stderr)
			continue
		}
		if !strings.HasPrefix(r.stderr, "throttle: ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want one line \"throttle: ...%s...\"", c.args, r.stderr, c.want)
		}
		// Worded for the user where the error is made: no internal
		// package's name leaks into it (nothing strips one any more).
		// A package prefix opens the message or a wrapped cause (": pkg: ").
		msg := ": " + strings.TrimPrefix(r.stderr, "throttle: ")
		for _, pkg := range []string{"governor: ", "target: ", "targets: ", "engine: ", "phase: ", "report: ", "session: ", "script: "} {
			if strings.Contains(msg, ": "+pkg) {
				t.Errorf("%v: stderr %q names the package %q", c.args, r.stderr, pkg)
			}
		}
		if r.stdout != "" {
			t.Errorf("%v: nothing should reach stdout, got %q", c.args, r.stdout)
		}
	}
}

// builtin is the built-in shedding target with capacity c req/s.
func builtin(t *testing.T, c float64) *target.Target {
	t.Helper()
	tg, err := target.New(target.NewConfig(c))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// A whole governed run through the CLI: the capacity lands in the band and
// every output file is written. 8 s, so that a loaded machine's run settles
// too; the band is loose below (a loaded generator's bursts are shed under
// the capacity) and tight above (the target bounds the goodput).
func TestRunWritesReports(t *testing.T) {
	srv := httptest.NewServer(builtin(t, 500))
	defer srv.Close()
	dir := t.TempDir()
	out, csv, chart := filepath.Join(dir, "r.json"), filepath.Join(dir, "w.csv"), filepath.Join(dir, "c.svg")
	r := cli(t, "", nil, "run", "--rate", "5000", "--start", "100", "--floor", "50", "--window", "300ms", "--tick", "50ms",
		"--duration", "8s", "--out", out, "--timeline", csv, "--chart", chart, srv.URL+"/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, w := range []string{"verdict      capacity ≈", "wrote        " + out, "wrote        " + chart} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "signal=slow-start") || !strings.Contains(r.stderr, "signal=back-off") {
		t.Errorf("the governor's movement lines must reach stderr:\n%s", r.stderr)
	}
	m := readJSON(t, out)
	goodput := m["capacity"].(map[string]any)["goodput_per_s"].(float64)
	if m["outcome"] != "capacity" || goodput < 150 || goodput > 540 {
		t.Errorf("outcome %v goodput %v, want capacity ≈ 500", m["outcome"], goodput)
	}
	b, err := os.ReadFile(csv)
	if err != nil || strings.Count(string(b), "\n") < 5 || !strings.HasPrefix(string(b), "start_s,") {
		t.Errorf("timeline: %v\n%s", err, b)
	}
	b, err = os.ReadFile(chart)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("chart: %v", err)
	}
}

// The JSON report the CLI writes has exactly the top-level fields of
// internal/report's golden document (which pins the schema in detail), and
// the CLI maps the engine's outcome classes onto the report's: 429s are
// counted as 429.
func TestReportSchemaAndAttribution(t *testing.T) {
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%4 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	r := cli(t, "", nil, "run", "--concurrency", "2", "--no-governor", "--tries", "2", "--window", "200ms", "--tick", "50ms",
		"--duration", "500ms", "--quiet", "--out", out, srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--quiet must keep stderr empty, got %q", r.stderr)
	}
	got := readJSON(t, out)
	golden := readJSON(t, filepath.Join("..", "..", "internal", "report", "testdata", "report.golden.json"))
	if k1, k2 := keys(got), keys(golden); strings.Join(k1, ",") != strings.Join(k2, ",") {
		t.Errorf("top-level fields %v, golden %v", k1, k2)
	}
	a := got["attempts"].(map[string]any)
	cl := a["by_class"].(map[string]any)
	if cl["429"].(float64) == 0 || cl["429"] != a["failed"] {
		t.Errorf("attempts %v: every failure is a 429", a)
	}
	it := got["iterations"].(map[string]any)
	if it["ok_frac"].(float64) <= 1-a["fail_frac"].(float64) {
		t.Errorf("with 2 tries iterations ok (%v) must beat attempts ok (1 - %v)", it["ok_frac"], a["fail_frac"])
	}
	if got["outcome"] != "not_governed" {
		t.Errorf("outcome %v", got["outcome"])
	}
}

// exited waits for a command started with started to exit and returns its
// code.
func exited(t *testing.T, code <-chan int, what string) int {
	t.Helper()
	return testwait.Receive(t, code, what)
}

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// Ctrl-C mid-phase: the phase stops, in-flight requests finish and the full
// report is still written. The interrupt comes once the target has served
// 300 requests (1.5 s at 200/s on an idle machine, later on a loaded one).
func TestInterruptWritesReport(t *testing.T) {
	tg := builtin(t, 1000)
	srv := httptest.NewServer(tg)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	sig := make(chan os.Signal, 1)
	_, errb, code := started([]string{"run", "--rate", "200", "--start", "200", "--window", "300ms", "--tick", "50ms",
		"--duration", "1m", "--out", out, srv.URL}, sig, nil)
	testwait.Until(t, testwait.Deadline, "300 requests served", func() bool { return tg.Stats().OK >= 300 })
	sig <- os.Interrupt
	// The phase lasts a minute: ending well inside the wait is the interrupt's doing.
	if c := exited(t, code, "the run to end after Ctrl-C"); c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if !errb.Contains("interrupted: no new arrivals") {
		t.Errorf("stderr lacks the interrupt notice:\n%s", errb.String())
	}
	m := readJSON(t, out)
	run := m["run"].(map[string]any)
	if run["interrupted"] != true || len(m["windows"].([]any)) < 2 || m["attempts"].(map[string]any)["ok"].(float64) < 100 {
		t.Errorf("run %v, %d windows: the report must hold what ran", run, len(m["windows"].([]any)))
	}
}

// A runtime failure (here: the report cannot be written, the disk is
// full) exits 1 after the text report. A run too short for one window has
// no chart to draw: one line says so, and that is no failure (#24: it used
// to fail the run).
func TestRuntimeFailureExit1(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r := cli(t, "", nil, "run", "--rate", "10", "--duration", "100ms", "--quiet", "--out", "/dev/full", srv.URL)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "throttle: writing /dev/full") || !strings.Contains(r.stdout, "verdict") {
		t.Errorf("%+v", r)
	}
	chart := filepath.Join(t.TempDir(), "c.svg")
	r = cli(t, "", nil, "run", "--rate", "10", "--duration", "100ms", "--quiet", "--chart", chart, srv.URL)
	if r.code != 0 || !strings.Contains(r.stdout, "not written  "+chart+": no window closed, nothing to chart") {
		t.Errorf("chart of no windows: %+v", r)
	}
}

// A --listen address the machine refuses (here: already in use) is a
// runtime failure, not bad input.
func TestTargetListenInUseExit1(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := cli(t, "", nil, "target", "--listen", ln.Addr().String())
	if r.code != 1 || !strings.HasPrefix(r.stderr, "throttle: --listen "+ln.Addr().String()) || !strings.Contains(r.stderr, "in use") {
		t.Errorf("%+v", r)
	}
}

// A ceiling below the default start lowers the start with it instead of
// blaming a --start the user never gave.
func TestLowCeilingLowersDefaults(t *testing.T) {
	r := cli(t, "", nil, "demo", "--rate", "20", "--window", "100ms", "--tick", "50ms", "--duration", "300ms", "--quiet")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("demo --rate 20: exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "start 20/s") {
		t.Errorf("want the start lowered to the ceiling:\n%s", r.stdout)
	}
}

// --grace 0 aborts what is in flight as soon as the phase ends.
func TestGraceZero(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	begin := time.Now()
	r := cli(t, "", nil, "run", "--concurrency", "2", "--no-governor", "--grace", "0", "--timeout", "1m",
		"--duration", "300ms", "--quiet", "--out", out, srv.URL)
	if r.code != 0 || time.Since(begin) > 5*time.Second {
		t.Fatalf("exit %d after %v: %s", r.code, time.Since(begin), r.stderr)
	}
	if m := readJSON(t, out); m["aborted_attempts"].(float64) != 2 {
		t.Errorf("aborted %v, want the 2 in flight", m["aborted_attempts"])
	}
}

func TestFraction(t *testing.T) {
	for in, want := range map[string]float64{"0.05": 0.05, "5%": 0.05, " 2.5 % ": 0.025, "1e-2": 0.01, "0": 0} {
		var f fraction
		if err := f.Set(in); err != nil || float64(f) != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, float64(f), err, want)
		}
	}
	for _, in := range []string{"", "%", "five", "5%%"} {
		var f fraction
		if err := f.Set(in); err == nil {
			t.Errorf("Set(%q) accepted", in)
		}
	}
}

// throttle target serves the built-in target until a signal, then says
// what it served.
func TestTargetCommand(t *testing.T) {
	var out, errb testwait.Buffer
	sig := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"target", "--listen", "127.0.0.1:0", "--capacity", "100"}, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, signals: sig})
	}()
	var url string
	testwait.Until(t, testwait.Deadline, "the address announced on stdout", func() bool {
		if _, rest, ok := strings.Cut(out.String(), " on http://"); ok && len(strings.Fields(rest)) > 0 {
			url = "http://" + strings.Fields(rest)[0]
		}
		return url != ""
	})
	resp, err := http.Get(url + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	sig <- os.Interrupt
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if !strings.Contains(out.String(), "stopped: 1 requests, 1 ok") {
		t.Errorf("stdout %q", out.String())
	}
}

// demo finds its built-in target's capacity and says how close it came. 8 s,
// so that a loaded machine's search settles too (in 4 s one was still
// backing off); the band is loose below and tight above, as in
// TestRunWritesReports.
func TestDemo(t *testing.T) {
	r := cli(t, "", nil, "demo", "--capacity", "400", "--floor", "50", "--start", "100", "--window", "300ms", "--tick", "50ms",
		"--duration", "8s", "--quiet")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var found, truth, dev float64
	i := strings.Index(r.stdout, "\nfound ")
	if i < 0 {
		t.Fatalf("no found line:\n%s", r.stdout)
	}
	if _, err := fmt.Sscanf(r.stdout[i+1:], "found %g req/s vs true %g req/s (%g %%)", &found, &truth, &dev); err != nil {
		t.Fatalf("found line: %v\n%s", err, r.stdout[i:])
	}
	// The line rounds found to a whole number (up to 0.125 % of 400) and
	// the deviation to 0.1 %: they agree within the two roundings.
	if truth != 400 || found < 120 || found > 432 || math.Abs(100*(found-truth)/truth-dev) > 0.125+0.05+1e-9 {
		t.Errorf("found %v vs true %v (%v %%)", found, truth, dev)
	}
}

// The tick follows the window unless given: min(1s, --window/5), and the
// settle span follows the tick; --early-breach=false reaches the engine.
func TestDefaultTickFollowsTheWindow(t *testing.T) {
	for _, c := range []struct {
		args []string
		tick time.Duration
	}{
		{nil, time.Second},
		{[]string{"--window", "1s"}, 200 * time.Millisecond},
		{[]string{"--window", "20s"}, time.Second},
		{[]string{"--window", "2ms"}, time.Millisecond},
		{[]string{"--window", "1s", "--tick", "500ms"}, 500 * time.Millisecond},
	} {
		var p phaseFlags
		var g flagGroups
		p.register(&g, phaseDefaults{duration: time.Minute, window: governor.DefaultWindow, floor: 1, start: 1})
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		for _, x := range g {
			fs.AddFlagSet(x.fs)
		}
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if _, err := p.phaseRun(fs, governor.Rate, 100, "--rate"); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if p.tick != c.tick || p.settle != c.tick || !p.earlyBreach {
			t.Errorf("%v: tick %v settle %v early %v, want tick = settle = %v, early breach on", c.args, p.tick, p.settle, p.earlyBreach, c.tick)
		}
	}
}

// --http2 with --insecure speaks HTTP/2 to a TLS server with a self-signed
// certificate, and --slow fails answers over the budget as class slow.
func TestHTTP2InsecureSlow(t *testing.T) {
	var h2 atomic.Uint64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		time.Sleep(20 * time.Millisecond)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	r := cli(t, "", nil, "run", "--concurrency", "2", "--no-governor", "--http2", "--insecure", "--slow", "1ms",
		"--window", "200ms", "--tick", "50ms", "--duration", "300ms", "--quiet", "--out", out, srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	a := readJSON(t, out)["attempts"].(map[string]any)
	if slow := a["by_class"].(map[string]any)["slow"]; slow.(float64) == 0 || slow != a["failed"] || slow != a["total"] {
		t.Errorf("attempts %v: every 20 ms answer is over a 1 ms budget", a)
	}
	if h2.Load() == 0 {
		t.Error("no request came over HTTP/2")
	}
	if r = cli(t, "", nil, "run", "--concurrency", "1", "--duration", "200ms", "--quiet", srv.URL); r.code != 0 || !strings.Contains(r.stdout, ": ok 0, failed") || !strings.Contains(r.stdout, "(100 %): tls ") {
		t.Errorf("without --insecure the self-signed certificate fails every attempt (class tls): exit %d\n%s", r.code, r.stdout)
	}
}
