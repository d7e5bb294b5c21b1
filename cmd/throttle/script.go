package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/bundle"
	"github.com/throttlekit/throttle/internal/script/k6out"
)

// isScript reports whether a run argument names a k6 script rather than a
// URL.
func isScript(arg string) bool {
	if strings.Contains(arg, "://") {
		return false
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".js", ".mjs", ".ts":
		return true
	}
	return false
}

// notForScripts are run's flags that have no meaning for a script: the
// script's options and code say what they say for a URL run.
var notForScripts = map[string]string{
	"rate":        "the scenarios' executors set the rate",
	"concurrency": "the scenarios' executors set the VUs",
	"url":         "the script makes its own requests",
	"targets":     "the script makes its own requests",
	"method":      "the script makes its own requests",
	"header":      "the script sets its own headers",
	"body":        "the script sets its own bodies",
	"max-vus":     "maxVUs is a scenario option",
	"tries":       "use throttle.tries(n, fn) from k6/x/throttle",
	"fail-on":     "a response callback (http.setResponseCallback) says what fails",
	"duration":    "each scenario's options say how long it runs",
	"grace":       "gracefulStop is a scenario option",
}

// scriptRun is one k6 script run from the command line.
type scriptRun struct {
	path     string
	env      []string // -e KEY=VALUE
	base     string   // demo: __ENV.BASE, the built-in target's URL
	insecure bool
	http2    bool
}

// governance turns the governor flags the user gave into overrides of every
// scenario's settings.
func (p *phaseFlags) governance(fs *pflag.FlagSet) script.Governance {
	var g script.Governance
	if fs.Changed("floor") {
		g.Floor = &p.floor
	}
	if fs.Changed("start") {
		g.Start = &p.start
	}
	if fs.Changed("high") {
		g.High = &p.high
	}
	if fs.Changed("low") {
		g.Low = &p.low
	}
	if fs.Changed("window") {
		g.Window = &p.window
	}
	if fs.Changed("min-attempts") {
		g.MinAttempts = &p.minAttempts
	}
	return g
}

// scriptEnv is __ENV: the process environment, then -e KEY=VALUE, then
// BASE for the demo.
func (s *scriptRun) scriptEnv() (map[string]string, error) {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for _, kv := range s.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("-e %q: want KEY=VALUE", kv)
		}
		env[k] = v
	}
	if s.base != "" {
		env["BASE"] = s.base
	}
	return env, nil
}

// run loads the script (every script problem is bad input, before any
// traffic), runs it with the live view, and writes one report per
// scenario. after, if set, gets the report of the top phase and where the
// governor's section goes.
func (s *scriptRun) run(e env, p *phaseFlags, fs *pflag.FlagSet, after func(env, *report.Report)) error {
	if p.noGovernor && p.govern {
		return usagef("--govern conflicts with --no-governor")
	}
	if p.noGovernor {
		for _, name := range []string{"start", "floor"} {
			if fs.Changed(name) {
				return usagef("--%s conflicts with --no-governor (every scenario runs as authored)", name)
			}
		}
	}
	if !fs.Changed("tick") {
		// The tick follows the window, as for run (scripts that configure
		// their own window keep this one tick).
		p.tick = max(governor.DefaultTickFor(p.window), minTick)
	}
	switch {
	case p.tick <= 0 || p.tick < minTick:
		return usagef("--tick must be at least %v, got %v", minTick, p.tick)
	case p.settle < 0:
		return usagef("--settle must be >= 0, got %v", p.settle)
	case p.timeout <= 0:
		return usagef("--timeout must be > 0, got %v", p.timeout)
	case p.slow < 0:
		return usagef("--slow must be >= 0, got %v", p.slow)
	}
	gopts, err := p.governorOptions()
	if err != nil {
		return err
	}
	if err := p.k6.check(p); err != nil {
		return err
	}
	if err := p.outputs(); err != nil {
		return err
	}
	vars, err := s.scriptEnv()
	if err != nil {
		return err
	}
	con := live.NewConsole(e.stderr, terminal(e.stderr))
	level := slog.LevelInfo
	switch {
	case p.quiet:
		level = slog.LevelWarn // warnings (a throwing iteration) still show
	case p.verbose:
		level = slog.LevelDebug
	}
	settle := p.tick
	if fs.Changed("settle") {
		settle = p.settle
	}
	cfg := script.Config{
		Env:        vars,
		Governance: p.governance(fs),
		Fixed:      p.noGovernor,
		Govern:     p.govern,
		Tick:       p.tick,
		Settle:     settle,
		Governor:   gopts,
		Insecure:   s.insecure,
		HTTP2:      s.http2,
		Slow:       p.slow,
		TrendStats: p.k6.trendStats,
		StdoutTTY:  terminal(e.stdout),
		StderrTTY:  terminal(e.stderr),
		Logger:     slog.New(live.NewHandler(con, level)),
		Console: func(l slog.Level, msg string) {
			prefix := "console: "
			if l >= slog.LevelWarn {
				prefix = "console " + strings.ToLower(l.String()) + ": "
			}
			con.Line(prefix + msg)
		},
	}
	if fs.Changed("timeout") {
		cfg.Timeout = p.timeout
	}
	if err := p.metrics.start(e); err != nil {
		return err
	}
	defer p.metrics.stop()
	cfg.Custom = p.metrics.custom()
	var points *k6out.JSON
	if p.k6.jsonOut != "" {
		if points, err = k6out.OpenJSON(p.k6.jsonOut); err != nil {
			return usagef("--out json=%s: %v", p.k6.jsonOut, err)
		}
		cfg.Points = points.Point
		defer func() {
			if points != nil {
				_ = points.Close()
			}
		}()
	}
	r, err := script.Load(s.path, cfg)
	if err != nil {
		var be *bundle.Error
		if errors.As(err, &be) {
			return usageError{err}
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return usagef("%s: %v", s.path, pe.Err)
		}
		return usageError{err}
	}
	if points != nil {
		points.Thresholds = map[string][]string{}
		for _, th := range r.Thresholds() {
			points.Thresholds[th.Metric] = append(points.Thresholds[th.Metric], th.Source)
		}
	}
	for _, ph := range r.Phases() {
		src := metrics.Source{Limits: ph.Limits(), Snapshot: ph.Snapshot, Windows: ph.Windows}
		if err := p.metrics.scriptPhase(ph.Name(), ph.Recorder(), src); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go live.WatchSignals(e.signals, done, cancel, r.Abort, func() int64 { return inFlight(r) }, con, 0)

	var view *live.View
	if !p.quiet {
		view = live.Start(con, scriptSource(r))
	}
	res, err := r.Run(ctx)
	if view != nil {
		view.Stop(con)
	}
	if err != nil {
		return err
	}
	phases, top, err := s.reports(r, p, res)
	if err != nil {
		return err
	}
	// k6's summary goes to stdout, or handleSummary's outputs instead of
	// it; then the governor's section, on stderr when handleSummary owns
	// stdout.
	summary := r.Summary(res.End.Sub(res.Start))
	crossed := 0
	for _, m := range summary.Metrics {
		for _, th := range m.Thresholds {
			if !th.OK {
				crossed++
			}
		}
	}
	var werr error
	out := e
	if res.HandleSummary {
		werr = res.SummaryErr
		if err := k6out.WriteOutputs(e.stdout, e.stderr, res.Outputs); err != nil && werr == nil {
			werr = err
		}
		out.stdout = e.stderr
	} else {
		k6out.WriteSummary(e.stdout, summary)
		fmt.Fprintln(e.stdout)
	}
	for i, ph := range phases {
		if len(phases) > 1 {
			if i > 0 {
				fmt.Fprintln(out.stdout)
			}
			fmt.Fprintf(out.stdout, "scenario     %s (%s)\n", ph.Phase, ph.Executor)
		}
		if err := ph.WriteText(out.stdout); err != nil {
			return err
		}
	}
	if len(phases) > 1 {
		fmt.Fprintln(out.stdout, "\nscenarios")
		for _, ph := range phases {
			fmt.Fprintf(out.stdout, "  %-12s %-22s %s\n", ph.Phase, ph.Executor, ph.Verdict)
		}
	}
	if res.Aborted {
		fmt.Fprintln(out.stdout, "\nthe script aborted the test (exec.test.abort)")
	}
	if after != nil {
		after(out, phases[top].Report)
	}
	doc, err := report.NewPhased(phases, top)
	if err != nil {
		return err
	}
	if err := writeFiles(out, p, phases[top].Report, doc.SaveJSON); err != nil && werr == nil {
		werr = err
	}
	if err := p.k6.writeSummaryExport(out, summary); err != nil && werr == nil {
		werr = err
	}
	if points != nil {
		err := points.Close()
		points = nil
		if err == nil {
			fmt.Fprintf(out.stdout, "wrote        %s\n", p.k6.jsonOut)
		} else if werr == nil {
			werr = err
		}
	}
	if werr != nil {
		return werr
	}
	if crossed > 0 {
		return thresholdsCrossed(crossed)
	}
	return nil
}

// thresholdsCrossed is a run whose thresholds (options.thresholds) did not
// all hold: exit 99, as in k6, after every report is written.
type thresholdsCrossed int

func (n thresholdsCrossed) Error() string {
	return fmt.Sprintf("%d threshold(s) crossed", int(n))
}

// reports builds one report per scenario and picks the top one: the first
// governed scenario, else the first.
func (s *scriptRun) reports(r *script.Runner, p *phaseFlags, res *script.RunResult) ([]report.Phase, int, error) {
	var out []report.Phase
	top := -1
	for _, ph := range r.Phases() {
		start, end := ph.Span()
		if start.IsZero() {
			start, end = res.End, res.End // never started (interrupted first)
		}
		in := report.Input{
			Settings: report.Settings{
				Limits:      ph.Limits(),
				Tick:        p.tick,
				Governed:    ph.Governed(),
				EarlyBreach: p.earlyBreach,
				Evidence:    p.evidenceSet.String(),
				Target:      fmt.Sprintf("%s scenario %s", filepath.Base(s.path), ph.Name()),
			},
			Windows:     ph.Windows(),
			Start:       start,
			End:         end,
			Interrupted: res.Interrupted,
			Latency:     ph.Recorder().Summary(),
			Generator:   generatorOf(ph.Generator()),
		}
		countsInto(&in, ph.Counts())
		rep, err := report.Build(in)
		if err != nil {
			return nil, 0, err
		}
		if top < 0 && ph.Governed() {
			top = len(out)
		}
		out = append(out, report.Phase{Phase: ph.Name(), Executor: string(ph.Scenario().Executor), Report: rep})
	}
	return out, max(top, 0), nil
}

// scriptSource follows one running scenario until it ends, then the next
// running one; when none runs, the one it followed last.
func scriptSource(r *script.Runner) live.Source {
	phases := r.Phases()
	cur := phases[0]
	return func() (engine.Snapshot, governor.Mode, *report.Recorder, string) {
		if !cur.Running() {
			for _, ph := range phases {
				if ph.Running() {
					cur = ph
					break
				}
			}
		}
		return cur.Snapshot(), cur.Limits().Mode, cur.Recorder(), cur.Name()
	}
}

// inFlight counts the iterations in flight across the scenarios.
func inFlight(r *script.Runner) int64 {
	var n int64
	for _, ph := range r.Phases() {
		n += ph.Snapshot().InFlight
	}
	return n
}
