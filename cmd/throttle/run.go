package main

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/targets"
)

// phaseFlags are the governor, engine and output flags run and demo share.
type phaseFlags struct {
	duration    time.Duration
	maxVUs      int
	timeout     time.Duration
	tries       int
	failOn      string
	slow        time.Duration
	start       float64
	floor       float64
	high        float64
	low         float64
	window      time.Duration
	minAttempts uint64
	tick        time.Duration
	settle      time.Duration
	earlyBreach bool
	evidence    string
	evidenceSet governor.Evidence // parsed from evidence by engineConfig
	grace       time.Duration
	noGovernor  bool
	govern      bool
	out         string
	timeline    string
	chart       string
	quiet       bool
	verbose     bool
	metrics     metricsServer
	k6          k6Flags
}

// phaseDefaults are the defaults a command gives the shared flags.
type phaseDefaults struct {
	duration, window time.Duration
	start, floor     float64
}

func (p *phaseFlags) register(fs *pflag.FlagSet, d phaseDefaults) {
	fs.DurationVar(&p.duration, "duration", d.duration, "how long the phase runs; 0 runs until Ctrl-C")
	fs.IntVar(&p.maxVUs, "max-vus", engine.DefaultMaxVUs, "rate mode: most workers (in-flight iterations); an arrival with none free is dropped and counted")
	fs.DurationVar(&p.timeout, "timeout", engine.DefaultTimeout, "per-attempt timeout, from sending to the last body byte")
	fs.IntVar(&p.tries, "tries", 1, "attempts per iteration, with a small jittered exponential backoff between them (10 ms doubling, at most 320 ms)")
	fs.StringVar(&p.failOn, "fail-on", engine.DefaultFailOn, "what counts as a failed attempt: transport, refused, reset, timeout, other, 1xx..5xx, or status codes such as 503")
	fs.DurationVar(&p.slow, "slow", 0, "latency budget: an otherwise ok attempt slower than this fails, class slow (default 0: none)")
	fs.Float64Var(&p.start, "start", d.start, "opening offer, never below --floor; a target known to be robust declares a higher one")
	fs.Float64Var(&p.floor, "floor", d.floor, "the offer never goes below it")
	p.high = governor.DefaultHigh
	fs.Var((*fraction)(&p.high), "high", "failure bound: a window whose attempt-failure fraction is above it backs off; in (0, 1), as 0.05 or 5%")
	fs.Var((*fraction)(&p.low), "low", "clean threshold: a window at or below it climbs (default --high / 5)")
	fs.DurationVar(&p.window, "window", d.window, "evidence gathered at one offer before a decision")
	fs.Uint64Var(&p.minAttempts, "min-attempts", governor.DefaultMinAttempts, "resolved attempts a window needs to count as evidence")
	fs.DurationVar(&p.tick, "tick", 0, "the governor's tick, at most --window/2 (default min(1s, --window/5)): it reads the counters once a tick, five times with --early-breach")
	fs.StringVar(&p.evidence, "evidence", "all", "evidence beyond failed attempts, comma-separated: unserved (rate mode: dropped arrivals and in-flight growth count as damage), latency (concurrency mode: latency inflated against the low-load baseline), drain (after a back-off, wait for the old offer's attempts), generator (a saturated generator holds); all, or none for the seed's rule")
	fs.BoolVar(&p.earlyBreach, "early-breach", true, "decide a gross breach inside the window, at any of five reads a tick (failure fraction above --high with 99 % confidence per window, on --min-attempts and either 5 × --min-attempts or a whole tick of evidence); false gives the seed's exact cadence")
	fs.DurationVar(&p.settle, "settle", 0, "after each change of the offer, how long to discard evidence (attempts sent at the old offer, a target still recovering) before the next window starts (default one --tick)")
	fs.DurationVar(&p.grace, "grace", engine.DefaultGrace, "when the phase ends, how long in-flight iterations may finish before they are aborted")
	fs.BoolVar(&p.noGovernor, "no-governor", false, "fixed load at the ceiling for the whole phase: a baseline to compare against")
	fs.BoolVar(&p.govern, "govern", false, "k6 script: govern every scenario, as importing k6/x/throttle does (the VU and arrival-rate executors' authored value becomes the ceiling the governor climbs to from --start)")
	fs.StringVar(&p.out, "out", "", "write the JSON report to this file; k6 script: json=FILE writes k6's JSON-lines metric points instead")
	fs.StringVar(&p.timeline, "timeline", "", "write the CSV timeline (one row per governor window) to this file")
	fs.StringVar(&p.chart, "chart", "", "write a chart of offer, throughput and attempt-fail % over time: .svg, .png or .html")
	fs.BoolVar(&p.quiet, "quiet", false, "no live view or movement lines; only the final report")
	fs.BoolVarP(&p.verbose, "verbose", "v", false, "also log the governor's holds (debug lines)")
	p.metrics.register(fs)
	p.k6.register(fs)
}

// minTick is the finest --tick: the governor reads two counters per tick, and
// a window is judged on tick boundaries, so nothing is gained below it.
const minTick = time.Millisecond

// limits turns the flags into the governor's limits for a phase of mode
// with the given ceiling, naming the offending flag on bad input.
func (p *phaseFlags) limits(fs *pflag.FlagSet, mode governor.Mode, ceiling float64, ceilingFlag string) (governor.Limits, error) {
	l := governor.NewLimits(mode, ceiling)
	l.Floor, l.Start, l.High = p.floor, p.start, p.high
	if math.IsNaN(ceiling) || math.IsInf(ceiling, 0) || ceiling <= 0 {
		return l, usagef("%s must be a number > 0, got %v", ceilingFlag, ceiling)
	}
	// Defaults give way to a low ceiling: the default floor and start never
	// exceed it (a user's own values are checked as given).
	if !fs.Changed("floor") {
		l.Floor = math.Min(p.floor, ceiling)
	}
	if !fs.Changed("start") {
		l.Start = math.Min(math.Max(p.start, l.Floor), ceiling)
	}
	l.Low = p.high / 5
	if fs.Changed("low") {
		l.Low = p.low
	}
	l.Window, l.MinAttempts = p.window, p.minAttempts
	if p.noGovernor {
		for _, name := range []string{"start", "floor"} {
			if fs.Changed(name) {
				return l, usagef("--%s conflicts with --no-governor (the load stays at the ceiling)", name)
			}
		}
		l.Floor, l.Start = ceiling, ceiling
	}
	if err := l.Validate(); err != nil {
		return l, usageError{flagNames(err, ceilingFlag)}
	}
	if !fs.Changed("tick") {
		p.tick = max(governor.DefaultTickFor(p.window), minTick)
	}
	if !fs.Changed("settle") {
		p.settle = p.tick
	}
	switch {
	case p.tick <= 0:
		return l, usagef("--tick must be > 0, got %v", p.tick)
	case p.tick < minTick:
		return l, usagef("--tick must be at least %v (a finer tick only burns CPU), got %v", minTick, p.tick)
	case p.tick > p.window/2:
		return l, usagef("--tick (%v) must be at most half of --window (%v): a window spans at least two ticks", p.tick, p.window)
	case p.settle < 0:
		return l, usagef("--settle must be >= 0, got %v", p.settle)
	case p.duration < 0:
		return l, usagef("--duration must be >= 0, got %v", p.duration)
	case p.maxVUs < 1:
		return l, usagef("--max-vus must be >= 1, got %d", p.maxVUs)
	case p.timeout <= 0:
		return l, usagef("--timeout must be > 0, got %v", p.timeout)
	case p.slow < 0:
		return l, usagef("--slow must be >= 0, got %v", p.slow)
	case p.tries < 1:
		return l, usagef("--tries must be >= 1, got %d", p.tries)
	case p.grace < 0:
		return l, usagef("--grace must be >= 0, got %v", p.grace)
	}
	return l, nil
}

// fraction is a flag value in [0, 1] given as a fraction (0.05) or a
// percentage (5%).
type fraction float64

func (f *fraction) String() string { return strconv.FormatFloat(float64(*f), 'g', -1, 64) }

// Type names the value in help text.
func (f *fraction) Type() string { return "fraction" }

// Set parses "0.05" or "5%".
func (f *fraction) Set(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return errors.New("want a fraction such as 0.05 or a percentage such as 5%")
	}
	*f = fraction(v / scale)
	return nil
}

var limitNames = regexp.MustCompile(`\b(ceiling|floor|start|high|low|window|min attempts)\b`)

// flagNames rewrites a governor.Limits error in the flags' terms:
// "governor: floor (5) must be <= ceiling (2)" becomes
// "--floor (5) must be <= --rate (2)".
func flagNames(err error, ceilingFlag string) error {
	msg := limitNames.ReplaceAllStringFunc(err.Error(), func(name string) string {
		switch name {
		case "ceiling":
			return ceilingFlag
		case "min attempts":
			return "--min-attempts"
		}
		return "--" + name
	})
	return errors.New(msg)
}

// outputs checks the output flags before the phase runs, so a typo in a
// path fails in a second instead of after the run.
func (p *phaseFlags) outputs() error {
	if p.chart != "" {
		if _, err := report.ChartFormatFor(p.chart); err != nil {
			return usagef("--chart %s: want a .svg, .png or .html file", p.chart)
		}
	}
	for _, o := range []struct{ flag, path string }{{"out", p.out}, {"timeline", p.timeline}, {"chart", p.chart}} {
		if o.path == "" {
			continue
		}
		dir := filepath.Dir(o.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("--%s %s: directory %s does not exist", o.flag, o.path, dir)
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return usagef("--%s %s is a directory", o.flag, o.path)
		}
	}
	return nil
}

// engineConfig builds the engine's configuration from the flags.
func (p *phaseFlags) engineConfig(tg []targets.Target, l governor.Limits) (engine.Config, error) {
	f, err := engine.ParseFailOn(p.failOn)
	if err != nil {
		return engine.Config{}, usageError{err}
	}
	gopts, err := p.governorOptions()
	if err != nil {
		return engine.Config{}, err
	}
	grace := p.grace
	if grace == 0 {
		grace = -1 // the engine's zero means its default; --grace 0 means no wait
	}
	return engine.Config{
		Targets:  tg,
		Limits:   l,
		Fixed:    p.noGovernor,
		Duration: p.duration,
		MaxVUs:   p.maxVUs,
		Timeout:  p.timeout,
		Tries:    p.tries,
		FailOn:   &f,
		Slow:     p.slow,
		Grace:    grace,
		Tick:     p.tick,
		Settle:   p.settle,
		Governor: gopts,
	}, nil
}

// governorOptions parses --evidence (into evidenceSet, for the report) and
// returns the governor options the phase flags ask for, for URL and script
// runs alike.
func (p *phaseFlags) governorOptions() ([]governor.Option, error) {
	evidence, ok := governor.ParseEvidence(p.evidence)
	if !ok {
		return nil, usagef("--evidence %q: want a comma-separated list of unserved, latency, drain, generator, or all or none", p.evidence)
	}
	p.evidenceSet = evidence
	return []governor.Option{governor.WithEarlyBreach(p.earlyBreach), governor.WithEvidence(evidence)}, nil
}

// runFlags are run's own flags.
type runFlags struct {
	phaseFlags
	urls        []string
	targetsFile string
	method      string
	headers     []string
	body        string
	rate        float64
	concurrency float64
	insecure    bool
	env         []string
	http2       bool
}

func newRunCmd(e env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [URL... | script.js]",
		Short: "Govern a load phase against HTTP targets and report their capacity",
		Long: `run governs one load phase against HTTP targets and reports the capacity it
found at the failure bound.

Give exactly one of --rate (open loop: iterations per second, arrivals on a
schedule whatever the response times; latency measured from the intended
start) or --concurrency (closed loop: iterations in flight, back to back).
Either value is the ceiling: the governor starts at --start (default
--floor) and never goes above it.

Targets are URLs (as arguments or --url, sent round-robin with --method, -H
and --body) or a targets file in vegeta's HTTP format (--targets FILE, "-"
for stdin):

    GET http://127.0.0.1:8080/items
    X-Account: 42

    POST http://127.0.0.1:8080/items
    Content-Type: application/json
    @item.json

While it runs, a status line shows the offer, attempts/s, attempt-fail %,
ok %, p50/p99 and the governor's state, with a line for every move of the
offer above it (plain lines every 5 s when stderr is not a terminal). At the
end the report goes to stdout. Ctrl-C stops new arrivals, lets in-flight
iterations finish (up to --grace) and writes the full report; a second
Ctrl-C aborts them at once.

A k6 script (script.js, .mjs or .ts) runs instead of URLs. It is governed
only when it imports k6/x/throttle or --govern is given; otherwise every
executor runs as authored (VUs, rates, stages, iterations), with no
governor movement lines. Governing changes this: each VU or arrival-rate
scenario becomes one governed phase (arrival-rate executors in rate mode,
VU executors in concurrency mode) whose authored value is the ceiling —
for ramping executors the stage target at that moment — and the governor
starts at --start and climbs below it, so the run's VUs, rates and
iteration counts are the governed ones; per-vu-iterations and
shared-iterations always run as authored. Every request of the script is
an attempt. -e KEY=VALUE fills __ENV beside the process environment; the
governor flags (--floor, --start, --high, --low, --window, --min-attempts,
--tick, --settle) override the script's throttle.configure settings for
every scenario; --no-governor runs every scenario as authored even when
the script imports k6/x/throttle. --out writes one report with a "phases"
entry per scenario. Modules the runner does not implement, and remote
imports, are refused before any traffic.`,
		Example: `  # Open loop up to 5000 req/s, default bound (5 % attempt failures):
  throttle run --rate 5000 http://127.0.0.1:8080/

  # Closed loop up to 64 in flight, 3 tries per iteration, reports to files:
  throttle run --concurrency 64 --tries 3 --targets targets.txt \
      --out report.json --timeline windows.csv --chart chart.html

  # A robust target: start at 500/s, judge 2-second windows, 1 % bound:
  throttle run --rate 20000 --start 500 --window 2s --high 0.01 https://api.internal/health

  # Baseline for comparison: fixed load at the ceiling, no governor:
  throttle run --rate 800 --no-governor --duration 30s http://127.0.0.1:8080/

  # A k6 script under the governor, its base URL from -e:
  throttle run -e BASE=http://127.0.0.1:8080 --out report.json script.js`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, args, e)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringArrayVar(&f.urls, "url", nil, "a target URL (repeatable; URLs may also be given as arguments)")
	fs.StringVar(&f.targetsFile, "targets", "", "targets file in vegeta's HTTP format (\"-\" reads stdin)")
	fs.StringVar(&f.method, "method", "GET", "HTTP method for URL targets")
	fs.StringArrayVarP(&f.headers, "header", "H", nil, "request header \"Key: Value\" (repeatable; added to every target)")
	fs.StringVar(&f.body, "body", "", "request body for URL targets; @path reads it from a file")
	fs.Float64Var(&f.rate, "rate", 0, "open loop: the ceiling in iterations per second")
	fs.Float64Var(&f.concurrency, "concurrency", 0, "closed loop: the ceiling in iterations in flight (a whole number)")
	f.register(fs, phaseDefaults{duration: 2 * time.Minute, window: governor.DefaultWindow, floor: governor.DefaultFloor, start: governor.DefaultFloor})
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (it is on by default)")
	fs.StringArrayVarP(&f.env, "env", "e", nil, "k6 script: KEY=VALUE for __ENV (repeatable)")
	fs.BoolVar(&f.http2, "http2", false, "send with net/http, which speaks HTTP/2 to servers that offer it over TLS (default: HTTP/1.1 on fasthttp, the faster client)")
	return cmd
}

func (f *runFlags) run(cmd *cobra.Command, args []string, e env) error {
	fs := cmd.Flags()
	for _, a := range args {
		if !isScript(a) {
			continue
		}
		if len(args) > 1 {
			return usagef("a k6 script runs alone: give %s without URLs", a)
		}
		for name, why := range notForScripts {
			if fs.Changed(name) {
				return usagef("--%s does not apply to a k6 script: %s", name, why)
			}
		}
		s := scriptRun{path: a, env: f.env, insecure: f.insecure, http2: f.http2}
		return s.run(e, &f.phaseFlags, fs, nil)
	}
	if fs.Changed("env") {
		return usagef("-e/--env fills a k6 script's __ENV; give a script")
	}
	if fs.Changed("govern") {
		return usagef("--govern applies to a k6 script; a URL run is always governed (--no-governor for a fixed load)")
	}
	if err := f.k6.notWithoutScript(fs, f.out); err != nil {
		return err
	}
	mode, ceiling, ceilingFlag := governor.Rate, f.rate, "--rate"
	switch rate, conc := fs.Changed("rate"), fs.Changed("concurrency"); {
	case rate && conc:
		return usagef("--rate and --concurrency conflict: give one (open loop or closed loop)")
	case !rate && !conc:
		return usagef("give --rate N (open loop, iterations/s) or --concurrency N (closed loop, in flight): it is the ceiling")
	case conc:
		mode, ceiling, ceilingFlag = governor.Concurrency, f.concurrency, "--concurrency"
		if fs.Changed("max-vus") {
			return usagef("--max-vus bounds the open-loop (--rate) pool; with --concurrency the ceiling bounds the workers")
		}
	}
	l, err := f.limits(fs, mode, ceiling, ceilingFlag)
	if err != nil {
		return err
	}
	tg, err := f.targets(fs, args, e)
	if err != nil {
		return err
	}
	if err := f.outputs(); err != nil {
		return err
	}
	cfg, err := f.engineConfig(tg, l)
	if err != nil {
		return err
	}
	cfg.Insecure, cfg.HTTP2 = f.insecure, f.http2
	return runPhase(e, &f.phaseFlags, cfg, describe(tg), nil)
}

// targets builds the target list from a targets file or the URLs.
func (f *runFlags) targets(fs *pflag.FlagSet, args []string, e env) ([]targets.Target, error) {
	header := http.Header{}
	for _, h := range f.headers {
		k, v, err := targets.ParseHeader(h)
		if err != nil {
			return nil, usagef("-H: %v", err)
		}
		header.Add(k, v)
	}
	urls := append(append([]string(nil), f.urls...), args...)
	if f.targetsFile != "" {
		if len(urls) > 0 {
			return nil, usagef("--targets conflicts with URLs: give a targets file or URLs, not both")
		}
		for _, name := range []string{"method", "body"} {
			if fs.Changed(name) {
				return nil, usagef("--%s applies to URL targets; with --targets put it in the file", name)
			}
		}
		tg, err := targets.Load(f.targetsFile, e.stdin)
		if err != nil {
			return nil, usageError{err}
		}
		for i := range tg {
			for k, vs := range header {
				tg[i].Header[k] = append(tg[i].Header[k], vs...)
			}
		}
		return tg, nil
	}
	if len(urls) == 0 {
		return nil, usagef("no target: give a URL (throttle run --rate 100 http://127.0.0.1:8080/) or --targets FILE")
	}
	var body []byte
	if strings.HasPrefix(f.body, "@") {
		b, err := os.ReadFile(f.body[1:])
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, usagef("--body %s: %v", f.body, err)
		}
		body = b
	} else if f.body != "" {
		body = []byte(f.body)
	}
	tg, err := targets.FromURLs(urls, f.method, header, body)
	if err != nil {
		return nil, usageError{err}
	}
	return tg, nil
}

// describe names what a phase loads, for the report: the first target and
// how many more.
func describe(tg []targets.Target) string {
	s := tg[0].Method + " " + tg[0].URL.String()
	if len(tg) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(tg)-1)
	}
	return s
}
