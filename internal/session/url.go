package session

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/report"
)

// URL is a URL run: one governed HTTP phase.
type URL struct {
	// Engine is the phase (its Latency, Observer and Logger are the
	// session's).
	Engine engine.Config
	// Settings are the report's settings: the target's description, the
	// early breach and the evidence (limits, tick and governed come from
	// the engine).
	Settings report.Settings
	// After, if set, adds lines to stdout once the report is written
	// (demo's found vs true).
	After func(stdout io.Writer, r *report.Report)
}

// RunURL runs one phase with its live view, then writes the report: text to
// stdout, and the files the outputs name. An interrupted phase writes its
// report too.
func (s *Session) RunURL(u URL) error {
	cfg := u.Engine
	// The timeline streams every window to a spool beside it as it closes:
	// a long run holds only its newest windows (phase.KeepWindows).
	var spool *report.Spool
	var ropts []report.RecorderOption
	if s.Outputs.Timeline != "" {
		sp, err := report.NewSpool(filepath.Dir(s.Outputs.Timeline))
		if err != nil {
			return Fieldf("--timeline", "%s: %v", s.Outputs.Timeline, err)
		}
		defer sp.Close()
		spool, ropts = sp, append(ropts, report.WithWindowSink(sp.Add))
	}
	rec, err := report.NewRecorder(cfg.Limits.High, ropts...)
	if err != nil {
		return BadInput{err}
	}
	con := s.console()
	if !s.Quiet {
		cfg.Logger = s.logger(slog.LevelInfo)
	}
	m := s.metrics()
	if err := m.Start(s.Stderr); err != nil {
		return err
	}
	defer m.Stop()
	cfg.Latency, cfg.Observer = rec, rec.Observe
	mp := m.urlPhase(rec)
	if mp != nil {
		cfg.Observer = func(w governor.Window) { rec.Observe(w); mp.Observe(w) }
	}
	eng, err := engine.New(cfg)
	if err != nil {
		return BadInput{err}
	}
	rec.SetMissed(func() uint64 { return eng.Meter().Counts().Missed }) // the timeline's missed column
	if err := m.attach(mp, eng); err != nil {
		return err
	}
	if s.Started != nil {
		s.Started(eng)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	var userAbort atomic.Bool // a second signal aborted what was in flight
	abort := func() { userAbort.Store(true); eng.Abort() }
	go live.WatchSignals(s.Signals, done, cancel, abort, func() int64 { return eng.Snapshot().InFlight }, con, max(eng.Config().Grace, 0))
	mode := eng.Config().Limits.Mode
	governed := !eng.Config().Fixed
	res, err := watched(s, ctx, eng.Run, func() live.Reading {
		return live.Reading{Snapshot: eng.Snapshot(), Mode: mode, Rec: rec, Governed: governed}
	})
	if err != nil {
		return err
	}
	if s.Finished != nil {
		s.Finished(res)
	}
	if s.spooled != nil && spool != nil {
		s.spooled(spool)
	}
	in := report.Input{Settings: u.Settings, Windows: res.Windows, Start: res.Start, End: res.End, Interrupted: res.Interrupted,
		Latency: rec.Summary(), Generator: generatorOf(res.Generator), Earlier: earlierOf(res.Earlier), Timeline: spool}
	in.Settings.Limits, in.Settings.Tick, in.Settings.Governed = eng.Config().Limits, eng.Config().Tick, !cfg.Fixed
	in.Settings.Transport = eng.Transport()
	countsInto(&in, res.Counts)
	if res.Panics > 0 {
		con.Line(fmt.Sprintf("recovered    %d Go panic(s) in throttle's request path (the first is logged above): each failed its attempt, class other; the run went on", res.Panics))
	}
	r, err := report.Build(in)
	if err != nil {
		return err
	}
	if err := r.WriteText(s.Stdout); err != nil {
		return err
	}
	if u.After != nil {
		u.After(s.Stdout, r)
	}
	if err := s.writeFiles(s.Stdout, r, r.SaveJSON); err != nil {
		return err
	}
	if userAbort.Load() {
		// A first Ctrl-C lets what is in flight finish: the report is whole
		// and the exit 0. A second cuts attempts off: the exit says so.
		return ExitCode{Code: ExitExternalAbort, Err: fmt.Errorf("run aborted by a second signal: %d attempt(s) cut off in flight (exit code %d)",
			res.Counts.Aborted, ExitExternalAbort)}
	}
	return nil
}

// watched runs run with the live view following src (unless quiet).
func watched[T any](s *Session, ctx context.Context, run func(context.Context) (T, error), src live.Source) (T, error) {
	var view *live.View
	if !s.Quiet {
		view = live.Start(s.console(), src)
	}
	res, err := run(ctx)
	if view != nil {
		view.Stop(s.console())
	}
	return res, err
}
