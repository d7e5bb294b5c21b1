package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/report"
)

// runPhase runs one governed phase with its live view, then writes the
// report: text to stdout, and the files the output flags name. after, if
// set, adds lines to stdout once the report is written (demo's found vs
// true). Interrupted phases write their report too.
func runPhase(e env, p *phaseFlags, cfg engine.Config, target string, after func(*report.Report)) error {
	rec, err := report.NewRecorder(cfg.Limits.High)
	if err != nil {
		return usageError{err}
	}
	con := live.NewConsole(e.stderr, terminal(e.stderr))
	level := slog.LevelInfo
	if p.verbose {
		level = slog.LevelDebug
	}
	if !p.quiet {
		cfg.Logger = slog.New(live.NewHandler(con, level))
	}
	if err := p.metrics.start(e); err != nil {
		return err
	}
	defer p.metrics.stop()
	cfg.Latency = rec
	cfg.Observer = rec.Observe
	mp := p.metrics.phase(rec)
	if mp != nil {
		cfg.Observer = func(w governor.Window) { rec.Observe(w); mp.Observe(w) }
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return usageError{err}
	}
	if err := p.metrics.attach(mp, eng); err != nil {
		return err
	}
	if e.started != nil {
		e.started(eng)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go live.WatchSignals(e.signals, done, cancel, eng.Abort, func() int64 { return eng.Snapshot().InFlight }, con, max(cfg.Grace, 0))

	var view *live.View
	if !p.quiet {
		view = live.Start(con, engineSource(eng, rec))
	}
	res, err := eng.Run(ctx)
	if view != nil {
		view.Stop(con)
	}
	if err != nil {
		return err
	}

	c := res.Counts
	in := report.Input{
		Settings: report.Settings{
			Limits:      eng.Config().Limits,
			Tick:        cfg.Tick,
			Governed:    !cfg.Fixed,
			EarlyBreach: p.earlyBreach,
			Evidence:    p.evidenceSet.String(),
			Target:      target,
		},
		Windows:     res.Windows,
		Start:       res.Start,
		End:         res.End,
		Interrupted: res.Interrupted,
		Latency:     rec.Summary(),
		Generator:   generatorOf(res.Generator),
	}
	countsInto(&in, c)
	r, err := report.Build(in)
	if err != nil {
		return err
	}
	if err := r.WriteText(e.stdout); err != nil {
		return err
	}
	if after != nil {
		after(r)
	}
	return writeFiles(e, p, r, r.SaveJSON)
}

// generatorOf is the report's view of a phase's watch of itself.
func generatorOf(g engine.GeneratorSummary) report.Generator {
	return report.Generator{Ticks: g.Ticks, SaturatedTicks: g.SaturatedTicks, Rate: g.Rate, Signals: g.Signals}
}

// countsInto fills a report input's counts from an engine's or a script
// phase's counters.
func countsInto(in *report.Input, c engine.Counts) {
	in.Attempts = report.Attempts{
		OK:        c.Classes[engine.ClassOK],
		Refused:   c.Classes[engine.ClassRefused],
		Reset:     c.Classes[engine.ClassReset],
		Timeout:   c.Classes[engine.ClassTimeout],
		Status5xx: c.Classes[engine.Class5xx],
		Status429: c.Classes[engine.Class429],
		Other:     c.Classes[engine.ClassOther],
		Slow:      c.Classes[engine.ClassSlow],
	}
	in.Iterations = report.Iterations{OK: c.IterOK, Failed: c.IterFailed}
	in.Dropped, in.Aborted = c.Dropped, c.Aborted
}

// writeFiles writes the report files the output flags name (the JSON with
// saveJSON, the timeline and chart of r); it tries each and reports the
// first failure.
func writeFiles(e env, p *phaseFlags, r *report.Report, saveJSON func(string) error) error {
	var first error
	for _, o := range []struct {
		path string
		save func(string) error
	}{{p.out, saveJSON}, {p.timeline, r.SaveCSV}, {p.chart, r.SaveChart}} {
		if o.path == "" {
			continue
		}
		if err := o.save(o.path); err != nil {
			if first == nil {
				first = fmt.Errorf("writing %s: %w", o.path, err)
			}
			continue
		}
		fmt.Fprintf(e.stdout, "wrote        %s\n", o.path)
	}
	return first
}

// engineSource follows a URL run's engine.
func engineSource(eng *engine.Engine, rec *report.Recorder) live.Source {
	mode := eng.Config().Limits.Mode
	return func() (engine.Snapshot, governor.Mode, *report.Recorder, string) {
		return eng.Snapshot(), mode, rec, ""
	}
}
