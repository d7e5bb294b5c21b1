package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
)

// phaseFlags are the load, governor, k6 and output flags run and demo
// share.
type phaseFlags struct {
	duration, timeout, slow, grace time.Duration
	maxVUs, tries                  int
	failOn                         string
	start, floor, high, low        float64
	window, tick, settle           time.Duration
	minAttempts                    uint64
	earlyBreach                    bool
	evidence                       string
	noGovernor, govern             bool
	outs                           []string // --out, repeatable
	timeline, chart                string
	k6                             k6Flags
	quiet, verbose                 bool
	metrics                        session.Metrics
	summaryExport                  string
	trendStats                     []string
}

// phaseDefaults are the defaults a command gives the shared flags.
type phaseDefaults struct {
	duration, window time.Duration
	start, floor     float64
}

// flagGroup is a titled set of a command's flags, for its help.
type flagGroup struct {
	title string
	fs    *pflag.FlagSet
}

// flagGroups are a command's flags by what they are about.
type flagGroups []flagGroup

// group returns the group's flag set, making it on first use.
func (g *flagGroups) group(title string) *pflag.FlagSet {
	for _, x := range *g {
		if x.title == title {
			return x.fs
		}
	}
	x := flagGroup{title, pflag.NewFlagSet(title, pflag.ContinueOnError)}
	x.fs.SortFlags = false
	*g = append(*g, x)
	return x.fs
}

// install adds the groups' flags to cmd and prints them by group in its
// help.
func (g flagGroups) install(cmd *cobra.Command) {
	for _, x := range g {
		cmd.Flags().AddFlagSet(x.fs)
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		w := c.OutOrStdout()
		fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n\nExamples:\n%s\n", strings.TrimSpace(c.Long), c.UseLine(), c.Example)
		for _, x := range g {
			fmt.Fprintf(w, "\n%s flags:\n%s", x.title, x.fs.FlagUsages())
		}
		fmt.Fprintf(w, "\nGlobal flags:\n  -h, --help   help for %s\n", c.Name())
	})
}

// register adds the shared flags to their groups.
func (p *phaseFlags) register(g *flagGroups, d phaseDefaults) {
	fs := g.group("Load")
	fs.DurationVarP(&p.duration, "duration", "d", d.duration, "how long the phase runs; 0 runs until Ctrl-C (k6 script: k6's duration shortcut)")
	fs.IntVar(&p.maxVUs, "max-vus", engine.DefaultMaxVUs, "rate mode: most workers (in-flight iterations); an arrival with none free is dropped and counted")
	fs.DurationVar(&p.timeout, "timeout", engine.DefaultTimeout, "per-attempt timeout, from sending to the last body byte (k6 script: the default request timeout, otherwise k6's 60s)")
	fs.IntVar(&p.tries, "tries", 1, "attempts per iteration, with a small jittered exponential backoff between them (10 ms doubling, at most 320 ms)")
	fs.StringVar(&p.failOn, "fail-on", engine.DefaultFailOn, "what counts as a failed attempt: transport (refused, reset, dns, tls, other), refused, reset, timeout, dns, tls, other, 1xx..5xx, or status codes such as 503")
	fs.DurationVar(&p.slow, "slow", 0, "latency budget: an otherwise ok attempt slower than this fails, class slow (default 0: none)")
	fs.DurationVar(&p.grace, "grace", engine.DefaultGrace, "when the phase ends, how long in-flight iterations may finish before they are aborted")

	fs = g.group("Governor")
	fs.Float64Var(&p.start, "start", d.start, "opening offer, never below --floor; a target known to be robust declares a higher one")
	fs.Float64Var(&p.floor, "floor", d.floor, "the offer never goes below it")
	p.high = governor.DefaultHigh
	fs.Var((*fraction)(&p.high), "high", "failure bound: a window whose attempt-failure fraction is above it backs off; in (0, 1), as 0.05 or 5%")
	fs.Var((*fraction)(&p.low), "low", "clean threshold: a window at or below it climbs (default --high / 5)")
	fs.DurationVar(&p.window, "window", d.window, "evidence gathered at one offer before a decision")
	fs.Uint64Var(&p.minAttempts, "min-attempts", governor.DefaultMinAttempts, "resolved attempts a window needs to count as evidence")
	fs.DurationVar(&p.tick, "tick", 0, "the governor's tick, at most --window/2 (default min(1s, --window/5)): it reads the counters once a tick, five times with --early-breach")
	fs.DurationVar(&p.settle, "settle", 0, "after each change of the offer, how long to discard evidence (attempts sent at the old offer, a target still recovering) before the next window starts (default one --tick)")
	fs.StringVar(&p.evidence, "evidence", "all", "evidence beyond failed attempts, comma-separated: unserved (rate mode: dropped arrivals and in-flight growth count as damage), latency (concurrency mode: latency inflated against the low-load baseline), drain (after a back-off, wait for the old offer's attempts), generator (a saturated generator holds); all, or none for the seed's rule")
	fs.BoolVar(&p.earlyBreach, "early-breach", true, "decide a gross breach inside the window, at any of five reads a tick (failure fraction above --high with 99 % confidence per window, on --min-attempts and either 5 × --min-attempts or a whole tick of evidence); false gives the seed's exact cadence")
	fs.BoolVar(&p.noGovernor, "no-governor", false, "fixed load at the ceiling for the whole phase (k6 script: every scenario as authored): a baseline to compare against")
	fs.BoolVar(&p.govern, "govern", false, "k6 script: govern every scenario, as importing k6/x/throttle does; a script that does neither runs as authored")

	fs = g.group("k6 script")
	fs.StringVar(&p.summaryExport, "summary-export", "", "k6 script: write the end-of-test summary to this file in k6's summary-export JSON")
	fs.StringSliceVar(&p.trendStats, "summary-trend-stats", nil, "k6 script: the trend statistics the summary shows, e.g. avg,min,med,max,p(90),p(99),count (overrides options.summaryTrendStats)")
	p.k6.register(fs)

	fs = g.group("Output")
	fs.StringArrayVarP(&p.outs, "out", "o", nil, "write the JSON report to this file; k6 script, repeatable: json=FILE k6's JSON-lines metric points, csv=FILE k6's CSV")
	fs.StringVar(&p.timeline, "timeline", "", "write the CSV timeline (one row per governor window) to this file")
	fs.StringVar(&p.chart, "chart", "", "write a chart of offer, throughput and attempt-fail % over time: .svg, .png or .html")
	fs.BoolVarP(&p.quiet, "quiet", "q", false, "no live view or movement lines; only the final report")
	fs.BoolVarP(&p.verbose, "verbose", "v", false, "also log the governor's holds (debug lines)")
	registerMetrics(fs, &p.metrics)
}

// registerMetrics adds --metrics ADDR.
func registerMetrics(fs *pflag.FlagSet, m *session.Metrics) {
	fs.StringVar(&m.Addr, "metrics", "", "serve Prometheus metrics on http://ADDR/metrics while the run lasts (the bound address is printed on stderr); loopback unless ADDR names a host: :9100, 127.0.0.1:0, 0.0.0.0:9100")
}

// session is where the phase's run writes.
func (p *phaseFlags) session(e env) *session.Session {
	report, _, _ := session.SplitOuts(p.outs)
	return e.session(p.quiet, p.verbose, session.Outputs{JSON: report, Timeline: p.timeline, Chart: p.chart}, &p.metrics)
}

// reportSettings are the report's view of the governor flags.
func (p *phaseFlags) reportSettings() report.Settings {
	ev, _ := governor.ParseEvidence(p.evidence)
	return report.Settings{Tick: p.tick, EarlyBreach: p.earlyBreach, Evidence: ev.String()}
}

// minTick is the finest --tick: the governor reads two counters per tick, and
// a window is judged on tick boundaries, so nothing is gained below it.
const minTick = time.Millisecond

// governorSettings checks the governor flags every run kind shares and
// fills the tick and settle defaults; it returns the governor options and
// the report's settings of them.
func (p *phaseFlags) governorSettings(fs *pflag.FlagSet) ([]governor.Option, error) {
	if !fs.Changed("tick") {
		p.tick = max(governor.DefaultTickFor(p.window), minTick)
	}
	if !fs.Changed("settle") {
		p.settle = p.tick
	}
	switch {
	case p.tick <= 0:
		return nil, usagef("--tick must be > 0, got %v", p.tick)
	case p.tick < minTick:
		return nil, usagef("--tick must be at least %v (a finer tick only burns CPU), got %v", minTick, p.tick)
	case p.settle < 0:
		return nil, usagef("--settle must be >= 0, got %v", p.settle)
	case p.timeout <= 0:
		return nil, usagef("--timeout must be > 0, got %v", p.timeout)
	case p.slow < 0:
		return nil, usagef("--slow must be >= 0, got %v", p.slow)
	}
	evidence, ok := governor.ParseEvidence(p.evidence)
	if !ok {
		return nil, usagef("--evidence %q: want a comma-separated list of unserved, latency, drain, generator, or all or none", p.evidence)
	}
	report, _, err := session.SplitOuts(p.outs)
	if err != nil {
		return nil, err
	}
	out := session.Outputs{JSON: report, Timeline: p.timeline, Chart: p.chart}
	if err := out.Check(); err != nil {
		return nil, err
	}
	return []governor.Option{governor.WithEarlyBreach(p.earlyBreach), governor.WithEvidence(evidence)}, nil
}

// limits turns the flags into the governor's limits for a URL phase of mode
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
	if err := p.notWithNoGovernor(fs, "the load stays at the ceiling"); err != nil {
		return l, err
	}
	if p.noGovernor {
		l.Floor, l.Start = ceiling, ceiling
	}
	if err := l.Validate(); err != nil {
		return l, usageError{Err: flagNames(err, ceilingFlag)}
	}
	switch {
	case p.tick > p.window/2:
		return l, usagef("--tick (%v) must be at most half of --window (%v): a window spans at least two ticks", p.tick, p.window)
	case p.duration < 0:
		return l, usagef("--duration must be >= 0, got %v", p.duration)
	case p.maxVUs < 1:
		return l, usagef("--max-vus must be >= 1, got %d", p.maxVUs)
	case p.tries < 1:
		return l, usagef("--tries must be >= 1, got %d", p.tries)
	case p.grace < 0:
		return l, usagef("--grace must be >= 0, got %v", p.grace)
	}
	return l, nil
}

// notWithNoGovernor refuses --start and --floor beside --no-governor.
func (p *phaseFlags) notWithNoGovernor(fs *pflag.FlagSet, why string) error {
	for _, name := range []string{"start", "floor"} {
		if p.noGovernor && fs.Changed(name) {
			return usagef("--%s conflicts with --no-governor (%s)", name, why)
		}
	}
	return nil
}

// notWithoutScript refuses the k6 flags on a run without a script.
func (p *phaseFlags) notWithoutScript(fs *pflag.FlagSet, give string) error {
	if fs.Changed("env") {
		return usagef("-e/--env fills a k6 script's __ENV; give %s", give)
	}
	for _, name := range []string{"summary-export", "summary-trend-stats", "govern", "grpc"} {
		if fs.Changed(name) {
			return usagef("--%s applies to a k6 script; give %s", name, give)
		}
	}
	if _, k6, _ := session.SplitOuts(p.outs); len(k6) > 0 {
		return usagef("--out %s is a k6 output of a script; give a script, or --out FILE for the report", k6[0])
	}
	if len(p.k6.given) > 0 {
		return usagef("--%s is a k6 option; give a script", p.k6.given[0][0])
	}
	return nil
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

// flagNames words a governor.Limits error in the flags' terms:
// "floor (5) must be <= ceiling (2)" becomes "--floor (5) must be <= --rate (2)".
func flagNames(err error, ceilingFlag string) error {
	var le *governor.LimitError
	if !errors.As(err, &le) {
		return err
	}
	return errors.New(le.In(func(limit string) string {
		switch limit {
		case "ceiling":
			return ceilingFlag
		case "min attempts":
			return "--min-attempts"
		}
		return "--" + limit
	}))
}
