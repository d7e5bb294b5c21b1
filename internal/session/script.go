package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/throttlekit/throttle/internal/agent"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/k6out"
)

// Script is a k6 script run.
type Script struct {
	Path string
	// Config is how the script runs; its Logger, Console, Custom, Points
	// and TTY fields are the session's.
	Config script.Config
	// Settings are every scenario's report settings (tick, early breach,
	// evidence); limits, governed and target are the scenario's.
	Settings report.Settings
	// SummaryExport is k6's --summary-export FILE ("": not written).
	SummaryExport string
	// Outs are k6's outputs, json=FILE and csv=FILE (SplitOuts).
	Outs []string
	// After, if set, gets the top scenario's report and where the
	// governor's section went (demo's found vs true).
	After func(w io.Writer, r *report.Report)
}

// RunScript loads the script (every script problem is bad input, before
// any traffic), runs it with the live view, then writes k6's summary (or
// handleSummary's outputs) to stdout and the governor's section after it —
// on stderr when handleSummary owns stdout — and every file asked for.
func (s *Session) RunScript(sc Script) error {
	if err := CheckPaths(map[string]string{"--summary-export": sc.SummaryExport}); err != nil {
		return err
	}
	con := s.console()
	cfg := sc.Config
	red := s.scriptOutput(&cfg, con)
	var read reads
	cfg.Read = read.hook(s.Verbose, con.Line, red)
	// k6's --http-debug dump, as its docs show it, credentials blanked.
	cfg.HTTPDebug = func(dump string) { con.Line(red.dump(dump)) }
	cfg.Exception = func(scenario, executor, msg string) {
		con.Line(exceptionLine(time.Now(), scenario, executor, red.String(msg)))
	}
	m := s.metrics()
	if err := m.Start(s.Stderr); err != nil {
		return err
	}
	defer m.Stop()
	cfg.Custom = m.custom()
	outs, outNames, err := openOuts(sc.Outs)
	if err != nil {
		return err
	}
	cfg.Points = red.Points(fanOut(outs, con.Line))
	defer func() {
		for _, w := range outs {
			_ = w.Close()
		}
	}()
	if err := envLimits(&cfg); err != nil {
		return err
	}
	memLimit, err := MemoryLimit()
	if err != nil {
		return BadInput{err}
	}
	cfg.MemoryBound = memLimit
	// The reports name the transport the VUs' request lanes send with.
	if sc.Settings.Transport, err = engine.LaneTransport(cfg.HTTP2); err != nil {
		return BadInput{err}
	}
	if memLimit > 0 {
		// The guard's bound is also the GC's soft limit for the run.
		defer script.BindMemory(memLimit, 1)()
	}
	r, err := s.loadScript(sc.Path, cfg)
	if err != nil {
		return err
	}
	if line := agent.FilesWarning(agent.ScriptFilePlan(r, 1)); line != "" {
		con.Line(line) // VUs' keep-alive connections past the open-file limit
	}
	for _, w := range outs {
		if j, ok := unguarded(w).(*k6out.JSON); ok {
			j.Thresholds = map[string][]string{}
			for _, th := range r.Thresholds() {
				j.Thresholds[th.Metric] = append(j.Thresholds[th.Metric], th.Source)
			}
		}
	}
	for _, ph := range r.Phases() {
		src := metrics.Source{Limits: ph.Limits(), Snapshot: ph.Snapshot, Windows: ph.Windows}
		if err := m.scriptPhase(ph.Name(), ph.Recorder(), src); err != nil {
			return err
		}
	}
	// The timeline is the top scenario's: its windows stream to a spool
	// beside it as they close, so that a day-long run's timeline has
	// every window while the scenario holds only its newest.
	var spool *report.Spool
	if s.Outputs.Timeline != "" {
		if spool, err = report.NewSpool(filepath.Dir(s.Outputs.Timeline)); err != nil {
			return Fieldf("--timeline", "%s: %v", s.Outputs.Timeline, err)
		}
		defer spool.Close()
		r.Phases()[topPhase(r)].Recorder().SetWindowSink(spool.Add)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go watchScriptSignals(s.Signals, done, cancel, r, con)
	guard := runMemory(memLimit)
	outOfMemory := guard.Watch(done, con.Line, func() { cancel(); r.Abort(); r.Interrupt() })
	res, err := watched(s, ctx, r.Run, scriptSource(r))
	if errors.Is(err, script.ErrInterrupted) {
		// A signal (or the memory bound) while the VUs' init contexts ran
		// before setup (script.Runner.MakeVUs): as during the first one.
		if outOfMemory.Load() {
			return fmt.Errorf("run stopped while making the VUs: %s", guard.Passed())
		}
		return ExitCode{Code: ExitExternalAbort, Err: err}
	}
	if ie := initError(err); ie != nil {
		return ie
	}
	if err != nil {
		return err
	}
	if s.spooled != nil && spool != nil {
		s.spooled(spool)
	}
	phases, top, err := reports(r, sc, res, spool)
	if err != nil {
		return err
	}
	summary := r.Summary(res.End.Sub(res.Start))
	// stdout is k6's: the end-of-test summary or handleSummary's stdout;
	// throttle's own report goes to stderr, and only for a governed run.
	out := s.Stderr
	var werr error
	keep := func(err error) {
		switch {
		case err == nil:
		case werr == nil:
			werr = err // the run's error
		default:
			fmt.Fprintf(out, "not written  %v\n", err)
		}
	}
	if res.Stopped != "" {
		con.Line(stoppedLine(res.Stopped))
	}
	if n := r.Panics(); n > 0 {
		con.Line(fmt.Sprintf("recovered    %d Go panic(s) in throttle's host code (the first is logged above): each failed its call, the run went on", n))
	}
	switch {
	case res.Stopped == "handleSummary" && !r.Options().NoSummary:
		// handleSummary was cut short: k6's default summary keeps what the
		// run gathered.
		k6out.WriteSummary(s.Stdout, summary)
		fmt.Fprintln(s.Stdout)
	case res.HandleSummary:
		keep(res.SummaryErr)
		keep(safely(func() error { return k6out.WriteOutputs(s.Stdout, s.Stderr, res.Outputs) }))
	case !r.Options().NoSummary:
		k6out.WriteSummary(s.Stdout, summary)
		fmt.Fprintln(s.Stdout)
	}
	if governed(r) {
		if err := writePhases(out, phases); err != nil {
			return err
		}
	}
	if sc.After != nil {
		sc.After(out, phases[top].Report)
	}
	// What the script read, with the report: every run that read a file
	// or a remote module says so, unless quiet.
	if line := read.line(governed(r) || s.Verbose); line != "" && (governed(r) || s.Verbose || !s.Quiet) {
		fmt.Fprintln(out, line)
	}
	doc, err := report.NewPhased(phases, top)
	if err != nil {
		return err
	}
	keep(s.writeFiles(out, phases[top].Report, doc.SaveJSON))
	if sc.SummaryExport != "" {
		err := safely(func() error { return k6out.WriteSummaryExport(sc.SummaryExport, summary) })
		keep(err)
		if err == nil {
			fmt.Fprintf(out, "wrote        %s\n", sc.SummaryExport)
		}
	}
	for i, w := range outs {
		err := w.Close()
		keep(err)
		if err == nil {
			fmt.Fprintf(out, "wrote        %s\n", outNames[i])
		}
	}
	outs = nil
	if werr != nil {
		return werr
	}
	switch {
	case outOfMemory.Load():
		return fmt.Errorf("run stopped: %s, %d attempt(s) aborted in flight", guard.Passed(), aborted(r))
	case res.AbortedByScript:
		return ExitCode{Code: ExitScriptAborted, Err: errors.New("test aborted by the script (exec.test.abort)")}
	case res.Interrupted:
		return ExitCode{Code: ExitExternalAbort, Err: interruptedErr(res.Stopped, aborted(r))}
	}
	if n := crossed(summary); n > 0 {
		return ThresholdsCrossed(n)
	}
	if res.MarkedFailed {
		return ExitCode{Code: ExitMarkedAsFailed, Err: errors.New("test marked as failed by the script (exec.test.fail)")}
	}
	return nil
}

// governed reports whether any of the run's scenarios is governed: only
// then does throttle write its own report.
func governed(r *script.Runner) bool {
	for _, ph := range r.Phases() {
		if ph.Governed() {
			return true
		}
	}
	return false
}

// crossed counts the summary's thresholds that did not hold.
func crossed(s *script.Summary) int {
	n := 0
	for _, m := range s.Metrics {
		for _, th := range m.Thresholds {
			if !th.OK {
				n++
			}
		}
	}
	return n
}

// writePhases writes one report per scenario, then (for several) a line
// each with its verdict.
func writePhases(w io.Writer, phases []report.Phase) error {
	for i, ph := range phases {
		if len(phases) > 1 {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "scenario     %s (%s)\n", ph.Phase, ph.Executor)
		}
		if err := ph.WriteText(w); err != nil {
			return err
		}
	}
	if len(phases) > 1 {
		fmt.Fprintln(w, "\nscenarios")
		for _, ph := range phases {
			fmt.Fprintf(w, "  %-12s %-22s %s\n", ph.Phase, ph.Executor, ph.Verdict)
		}
	}
	return nil
}

// reports builds one report per scenario and picks the top one
// (topPhase), whose timeline is spooled (nil: none).
func reports(r *script.Runner, sc Script, res *script.RunResult, spool *report.Spool) ([]report.Phase, int, error) {
	var out []report.Phase
	top := topPhase(r)
	for i, ph := range r.Phases() {
		start, end := ph.Span()
		if start.IsZero() {
			start, end = res.End, res.End // never started (interrupted first)
		}
		in := report.Input{Settings: sc.Settings, Windows: ph.Windows(), Start: start, End: end, Interrupted: res.Interrupted,
			Latency: ph.Recorder().Summary(), Generator: generatorOf(ph.Generator()), Earlier: earlierOf(ph.Earlier())}
		if i == top {
			in.Timeline = spool
		}
		in.Settings.Limits, in.Settings.Governed = ph.Limits(), ph.Governed()
		in.Settings.Target = fmt.Sprintf("%s scenario %s", filepath.Base(sc.Path), ph.Name())
		countsInto(&in, ph.Counts())
		rep, err := report.Build(in)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, report.Phase{Phase: ph.Name(), Executor: string(ph.Scenario().Executor), Report: rep})
	}
	return out, top, nil
}

// topPhase is the index of the scenario whose report leads (and whose
// timeline and chart are written): the first governed one, else the first.
func topPhase(r *script.Runner) int {
	for i, ph := range r.Phases() {
		if ph.Governed() {
			return i
		}
	}
	return 0
}

// scriptSource follows one running scenario until it ends, then the next
// running one; when none runs, the one it followed last.
func scriptSource(r *script.Runner) live.Source {
	phases := r.Phases()
	cur := phases[0]
	return func() live.Reading {
		if !cur.Running() {
			for _, ph := range phases {
				if ph.Running() {
					cur = ph
					break
				}
			}
		}
		return live.Reading{Snapshot: cur.Snapshot(), Mode: cur.Limits().Mode, Rec: cur.Recorder(), Name: cur.Name(), Governed: cur.Governed()}
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

// envLimits fills the limits a script's environment variables set
// (THROTTLE_BODY_LIMIT, THROTTLE_INIT_MEMORY, THROTTLE_INIT_TIMEOUT) where
// the configuration leaves them at their defaults: one place, so that a
// run on one machine and a controller loading the script for its agents
// read them alike.
func envLimits(cfg *script.Config) error {
	var err error
	if cfg.BodyLimit == 0 {
		if cfg.BodyLimit, err = bodyLimit(); err != nil {
			return BadInput{err}
		}
	}
	if cfg.InitMemory == 0 {
		if cfg.InitMemory, err = sizeEnv(InitMemoryEnv); err != nil {
			return BadInput{err}
		}
	}
	if cfg.InitTimeout == 0 {
		if cfg.InitTimeout, err = initTimeout(); err != nil {
			return BadInput{err}
		}
	}
	return nil
}
