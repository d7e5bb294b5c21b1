// Command controllers compares load controllers on model targets and prints
// the result as Markdown: throttle's governor beside AIMD, a linear ramp to
// failure and fixed load at the ceiling, every one with the same start,
// ceiling, windows and run length (docs/design.md §5, issue 5). It runs the
// deterministic simulator of internal/sim, so the figures are exact and the
// same on every machine; it takes a few seconds.
//
// It prints three tables: per controller and model, the settled offer, the
// failures inflicted before settling, the windows to reach 90 % of capacity
// and the oscillation once settled; a sweep over every integer capacity with
// the median and worst figures of throttle and the ramp; and what slow
// start's one window of overshoot costs. With -chart it also writes an SVG
// of the offer over windows of every controller on one model.
//
//	go run ./bench/controllers -chart /tmp/controllers.svg
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/sim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "controllers:", err)
		os.Exit(2)
	}
}

// config is what the flags set.
type config struct {
	capacities []float64
	windows    int // run length of the model tables, in windows of Limits.Window
	stretch    float64
	sweepLo    int
	sweepHi    int
	sweepRun   time.Duration
	chart      string
	chartModel string
	chartC     float64
}

func parse(args []string, out io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("controllers", flag.ContinueOnError)
	fs.SetOutput(out)
	caps := fs.String("c", "1000,1300", "capacities of the per-model tables, comma-separated (1000 suits the ramp's step of 500; 1300 does not)")
	fs.IntVar(&cfg.windows, "windows", 3000, "run length of the per-model tables, in 5 s windows (AIMD needs about c windows to climb)")
	fs.Float64Var(&cfg.stretch, "stretch", 0.2, "final fraction of a run the steady figures are taken over")
	fs.IntVar(&cfg.sweepLo, "sweep-from", 20, "lowest capacity of the sweep")
	fs.IntVar(&cfg.sweepHi, "sweep-to", 9000, "highest capacity of the sweep (every integer in between is run)")
	sweepRun := fs.Duration("sweep-run", 600*time.Second, "run length of each sweep run")
	fs.StringVar(&cfg.chart, "chart", "", "write a chart of the offer over windows to this path (SVG; PNG when it ends in .png)")
	fs.StringVar(&cfg.chartModel, "chart-model", "doubles", "model the chart shows (shed, queue, collapse, doubles, halves, noisy, dead, backlog)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, s := range strings.Split(*caps, ",") {
		c, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || c < 1 || c > 9000 || math.IsNaN(c) {
			return cfg, fmt.Errorf("-c: capacity %q must be a number from 1 to 9000 (the ceiling is 10000)", s)
		}
		cfg.capacities = append(cfg.capacities, c)
	}
	cfg.chartC = cfg.capacities[0]
	known := false
	for _, m := range sim.ReportModels(1, time.Hour) {
		known = known || named(m, cfg.chartModel)
	}
	if !known {
		return cfg, fmt.Errorf("-chart-model: no model named %q (shed, queue, collapse, doubles, halves, noisy, dead, backlog)", cfg.chartModel)
	}
	cfg.sweepRun = *sweepRun
	switch {
	case cfg.windows < 10:
		return cfg, fmt.Errorf("-windows must be at least 10, got %d", cfg.windows)
	case cfg.stretch <= 0 || cfg.stretch >= 1:
		return cfg, fmt.Errorf("-stretch must be in (0, 1), got %v", cfg.stretch)
	case cfg.sweepLo < 1 || cfg.sweepHi < cfg.sweepLo || cfg.sweepHi > 9000:
		return cfg, fmt.Errorf("-sweep-from and -sweep-to must satisfy 1 <= from <= to <= 9000, got %d and %d", cfg.sweepLo, cfg.sweepHi)
	case cfg.sweepRun < time.Minute:
		return cfg, fmt.Errorf("-sweep-run must be at least 1m, got %v", cfg.sweepRun)
	}
	return cfg, nil
}

func run(args []string, out io.Writer) error {
	cfg, err := parse(args, out)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	l := sim.Setting()
	runLen := time.Duration(cfg.windows) * l.Window
	fmt.Fprintf(out, "# Controller quality\n\n")
	fmt.Fprintf(out, "Setting (docs/design.md §5): rate mode, start = floor = %g, ceiling %g, high %g %%, low %g %%, window %v, tick 1 s (throttle reads its counters every 200 ms, five times a tick, for the early breach; the seed once a tick), min attempts %d. "+
		"Every controller gets the same start (fixed load excepted: it is the ceiling from the first tick), ceiling, window rule and run length. "+
		"The ramp steps ceiling/20 = %g per window. A window is one decision: it lasts at least %v and until it holds %d resolved attempts "+
		"(so at offer 1 it lasts 20 s, at offer 2 10 s), for every controller but one: throttle's quick climb (governor.WithQuickClimb, on by default; off in *throttle, seed*) "+
		"decides a clean slow-start or safe-climb window after a tick of evidence (a tick's attempts, at most min attempts), so its climb from offer 1 takes a second a doubling.\n\n",
		l.Floor, l.Ceiling, l.High*100, l.Low*100, l.Window, l.MinAttempts, l.Ceiling/20, l.Window, l.MinAttempts)
	fmt.Fprintf(out, "Settled means the offer entered [0.9 c, c/(1 − high)] and stayed there to the end of the run; "+
		"figures marked *steady* are over the final %g %% of the run. Windows and seconds to settle or to reach 90 %% of c, and failures before settling, "+
		"count from the window in progress at the target's last change (the change, the recovery); a run that never settles counts its failures to the end. "+
		"The whole-run column includes what a controller inflicted on a dead target. "+
		"*Reported capacity* is what throttle itself reports at the end of the run (governor.Capacity: goodput over the settled windows at the level the run settled at).\n\n",
		cfg.stretch*100)

	var chartRuns []sim.Result
	var chartModel sim.Model
	for _, c := range cfg.capacities {
		runs, m, err := modelTable(out, l, c, runLen, cfg)
		if err != nil {
			return err
		}
		if c == cfg.chartC {
			chartRuns, chartModel = runs, m
		}
	}
	if err := sweepTables(out, l, cfg); err != nil {
		return err
	}
	if err := recoveryTable(out, l, runLen, cfg); err != nil {
		return err
	}
	if cfg.chart != "" {
		if err := writeChart(cfg.chart, chartRuns, chartModel, cfg.chartC); err != nil {
			return err
		}
		fmt.Fprintf(out, "Chart: offer over windows on %s (c = %g) written to %s.\n", cfg.chartModel, cfg.chartC, cfg.chart)
	}
	return nil
}

// controllers returns fresh controllers for one run each, in report order.
func controllers(l governor.Limits) []sim.Controller {
	return []sim.Controller{sim.NewGovernor(l), sim.NewSeedGovernor(l), sim.NewAIMD(l), sim.NewRamp(l, l.Ceiling/20), sim.NewFixed(l)}
}

func runModel(ctl sim.Controller, m sim.Model, stop sim.Option) (sim.Result, error) {
	opts := []sim.Option{stop}
	if m.Sampled {
		opts = append(opts, sim.WithNoise(1))
	}
	r, err := sim.Run(ctl, m.New(), opts...)
	if err != nil {
		return r, fmt.Errorf("%s on %s: %w", ctl.Name(), m.Name, err)
	}
	return r, nil
}

// modelTable prints the per controller × model table at capacity c and
// returns the runs of the chart's model, and that model.
func modelTable(out io.Writer, l governor.Limits, c float64, runLen time.Duration, cfg config) ([]sim.Result, sim.Model, error) {
	fmt.Fprintf(out, "## Per model, c = %g, run %v (%d windows of %v)\n\n", c, runLen, cfg.windows, l.Window)
	fmt.Fprintf(out, "c is the capacity after the model's last change (doubles: %g, halves: %g). The dead model fails every attempt from %v to %v.\n\n",
		2*c, c/2, runLen/2, runLen/2+runLen/10)
	fmt.Fprintln(out, "| model | controller | steady offer / c | steady goodput / c | reported capacity / c | steady fail % | oscillation / c | windows to 90 % c | s to 90 % c | windows to settle | s to settle | failures before settling | failed % before settling | failures, whole run |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var chart []sim.Result
	var chartModel sim.Model
	for _, m := range sim.ReportModels(c, runLen) {
		for _, ctl := range controllers(l) {
			r, err := runModel(ctl, m, sim.For(runLen))
			if err != nil {
				return nil, m, err
			}
			q := sim.Assess(r, m.C, l.High, m.Event, cfg.stretch)
			to90, s90, settle, sSettle := "never", "never", "never", "never"
			if q.Reached90 {
				to90 = strconv.Itoa(q.To90)
				s90 = secs(q.To90At - m.Event)
			}
			if q.Settled {
				settle = strconv.Itoa(q.SettleWindows)
				sSettle = secs(q.SettleAt - m.Event)
			}
			reported := "—" // only the governor reports a capacity
			if _, ok := ctl.(*sim.Governor); ok {
				reported = strconv.FormatFloat(governor.Capacity(r.Windows, l.High).Goodput/m.C, 'f', 3, 64)
			}
			fmt.Fprintf(out, "| %s | %s | %.3f | %.3f | %s | %.2f | %.3f | %s | %s | %s | %s | %d | %.2f | %d |\n",
				m.Name, r.Controller, q.Offer/m.C, q.Goodput/m.C, reported, 100*q.Frac, q.Oscillation, to90, s90, settle, sSettle,
				q.FailedBefore, pct(q.FailedBefore, q.AttemptsBefore), q.Failed)
			if named(m, cfg.chartModel) {
				chart, chartModel = append(chart, r), m
			}
		}
	}
	fmt.Fprintln(out)
	return chart, chartModel, nil
}

// named reports whether key names m: the model's name up to its first
// comma ("dead" names "dead, recovers").
func named(m sim.Model, key string) bool {
	first, _, _ := strings.Cut(m.Name, ",")
	return first == key
}

// sweepRow is one controller's figures at one capacity.
type sweepRow struct {
	goodput   float64 // steady goodput / c
	failed    float64 // failures before settling, ÷ c
	frac      float64 // failure fraction before settling
	steady    float64 // steady failure fraction
	settled   bool
	overshoot float64 // throttle: breach window failures / attempts before settling
	share     float64 // throttle: breach window failures / failures before settling
}

func sweepTables(out io.Writer, l governor.Limits, cfg config) error {
	n := cfg.sweepHi - cfg.sweepLo + 1
	fmt.Fprintf(out, "## Sweep over c: throttle and the linear ramp\n\n")
	fmt.Fprintf(out, "Every integer c from %d to %d (%d capacities), run %v each, deterministic counts. "+
		"Failures before settling are divided by c (seconds of capacity lost); for a run that never settles they count the whole run. "+
		"Nothing is asserted here: a ramp whose step suits c beats throttle on both counts.\n\n", cfg.sweepLo, cfg.sweepHi, n, cfg.sweepRun)
	fmt.Fprintln(out, "| model | controller | settled | goodput / c median | goodput / c worst | failures before settling ÷ c median | worst | failed % before settling median | worst | steady fail % median | worst |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	type model struct {
		name string
		lo   int
		new  func(c float64) sim.Target
	}
	overshoot := map[string][]sweepRow{}
	for _, m := range []model{{"shed", cfg.sweepLo, sim.Shed}, {"collapse", max(cfg.sweepLo, 50), sim.Collapse}} {
		if m.lo > cfg.sweepHi {
			continue // the collapse bars start at c = 50
		}
		for _, mk := range []func() sim.Controller{
			func() sim.Controller { return sim.NewGovernor(l) },
			func() sim.Controller { return sim.NewSeedGovernor(l) },
			func() sim.Controller { return sim.NewRamp(l, l.Ceiling/20) },
		} {
			var rows []sweepRow
			name := ""
			for ci := m.lo; ci <= cfg.sweepHi; ci++ {
				c := float64(ci)
				ctl := mk()
				name = ctl.Name()
				r, err := sim.Run(ctl, m.new(c), sim.For(cfg.sweepRun))
				if err != nil {
					return fmt.Errorf("%s on %s c=%v: %w", name, m.name, c, err)
				}
				q := sim.Assess(r, c, l.High, 0, cfg.stretch)
				row := sweepRow{goodput: q.Goodput / c, failed: float64(q.FailedBefore) / c, steady: q.Frac, settled: q.Settled}
				if q.AttemptsBefore > 0 {
					row.frac = float64(q.FailedBefore) / float64(q.AttemptsBefore)
				}
				if q.Breached {
					row.overshoot = float64(q.Breach.Failed) / float64(q.AttemptsToBreach)
					row.share = float64(q.Breach.Failed) / float64(q.FailedToBreach)
				}
				rows = append(rows, row)
			}
			settled := 0
			for _, r := range rows {
				if r.settled {
					settled++
				}
			}
			g := column(rows, func(r sweepRow) float64 { return r.goodput })
			f := column(rows, func(r sweepRow) float64 { return r.failed })
			fr := column(rows, func(r sweepRow) float64 { return 100 * r.frac })
			st := column(rows, func(r sweepRow) float64 { return 100 * r.steady })
			fmt.Fprintf(out, "| %s | %s | %d / %d | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				m.name, name, settled, len(rows), median(g, 3), worst(g, slices.Min, 3), median(f, 2), worst(f, slices.Max, 2),
				median(fr, 2), worst(fr, slices.Max, 2), median(st, 2), worst(st, slices.Max, 2))
			if name == "throttle" || name == sim.SeedCadence {
				overshoot[m.name+"|"+name] = rows
			}
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "## Slow start's overshoot\n\n")
	fmt.Fprintf(out, "Failures inflicted in throttle's first breach window (slow start's doubling past c; none when a doubling lands within c/(1 − high)) "+
		"as a fraction of all attempts before settling (the breach window included, when the offer it was judged at already lay in the band), "+
		"and as a share of the failures in that span: with the seed's cadence the breach costs a whole window at the overshoot; with early breach (the default) "+
		"the window closes at the first read (five a tick) whose evidence shows the breach with confidence.\n\n")
	fmt.Fprint(out, "Over the capacities of the sweep whose slow start breached (the others never overshot).\n\n")
	fmt.Fprintln(out, "| model | controller | breach-window failures / attempts before settling, median | worst | share of failures before settling, median | lowest |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: | ---: |")
	for _, key := range []string{"shed|throttle", "shed|" + sim.SeedCadence, "collapse|throttle", "collapse|" + sim.SeedCadence} {
		rows := overshoot[key]
		name, ctl, _ := strings.Cut(key, "|")
		var breached []sweepRow
		for _, r := range rows {
			if r.overshoot > 0 {
				breached = append(breached, r)
			}
		}
		o := column(breached, func(r sweepRow) float64 { return 100 * r.overshoot })
		s := column(breached, func(r sweepRow) float64 { return 100 * r.share })
		fmt.Fprintf(out, "| %s | %s | %s %% | %s %% | %s %% | %s %% |\n", name, ctl, median(o, 2), worst(o, slices.Max, 2), median(s, 1), worst(s, slices.Min, 1))
	}
	fmt.Fprintln(out)
	return nil
}

// recoveryPhases is how many recovery instants recoveryTable tries, 200 ms
// apart: together they span one 20 s window at offer 1.
const recoveryPhases = 100

// recoveryTable prints, for throttle and the seed at each capacity of the
// report, the seconds from the recovery of "dead, recovers" to settling,
// over recoveryPhases recovery instants: where a recovery falls against the
// 20 s windows at the floor decides a single run's figure by up to a
// window, so one row of the per-model table cannot say which variant
// recovers sooner; the spread over the phases can.
func recoveryTable(out io.Writer, l governor.Limits, runLen time.Duration, cfg config) error {
	fmt.Fprintf(out, "## Recovery from the floor, over its phase\n\n")
	fmt.Fprintf(out, "The dead model, with the recovery moved over %d instants %v apart (one 20 s window at offer 1): seconds from the recovery until the offer settled, "+
		"over the instants. The per-model table's row is one of them.\n\n", recoveryPhases, 200*time.Millisecond)
	fmt.Fprintln(out, "| c | controller | median | p10 | p90 | worst | later than the seed at the same instant |")
	fmt.Fprintln(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range cfg.capacities {
		settle := map[string][]float64{}
		for k := range recoveryPhases {
			from := runLen / 2
			until := from + runLen/10 + time.Duration(k)*200*time.Millisecond
			for _, ctl := range []sim.Controller{sim.NewGovernor(l), sim.NewSeedGovernor(l)} {
				r, err := sim.Run(ctl, sim.Dead(sim.Shed(c), from, until), sim.For(until+10*time.Minute))
				if err != nil {
					return fmt.Errorf("%s on the dead model: %w", ctl.Name(), err)
				}
				q := sim.Assess(r, c, l.High, until, cfg.stretch)
				s := math.Inf(1)
				if q.Settled {
					s = (q.SettleAt - until).Seconds()
				}
				settle[ctl.Name()] = append(settle[ctl.Name()], s)
			}
		}
		for _, name := range []string{"throttle", sim.SeedCadence} {
			xs := settle[name]
			later := 0
			for i, x := range xs {
				if x > settle[sim.SeedCadence][i] {
					later++
				}
			}
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			fmt.Fprintf(out, "| %g | %s | %s | %s | %s | %s | %d of %d |\n", c, name, median(xs, 1),
				strconv.FormatFloat(sorted[len(sorted)/10], 'f', 1, 64), strconv.FormatFloat(sorted[len(sorted)*9/10], 'f', 1, 64),
				worst(xs, slices.Max, 1), later, len(xs))
		}
	}
	fmt.Fprintln(out)
	return nil
}

func column(rows []sweepRow, f func(sweepRow) float64) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// median formats the median of xs with prec decimals, "—" when xs is empty.
func median(xs []float64, prec int) string {
	if len(xs) == 0 {
		return "—"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	return strconv.FormatFloat(m, 'f', prec, 64)
}

// worst formats pick(xs) (slices.Min or slices.Max, whichever is worse for
// the figure) with prec decimals, "—" when xs is empty.
func worst(xs []float64, pick func([]float64) float64, prec int) string {
	if len(xs) == 0 {
		return "—"
	}
	return strconv.FormatFloat(pick(xs), 'f', prec, 64)
}

func pct(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
