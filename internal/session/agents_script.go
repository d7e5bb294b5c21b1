package session

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/agent"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/bundle"
	"github.com/throttlekit/throttle/internal/script/k6out"
)

// RunScriptAgents runs a k6 script over agents, this process the
// controller: it loads the script (every script problem is bad input,
// before any agent is waited for), ships it as one archive, gives each
// agent its execution segment of an equal split, merges the agents' k6
// metric and check deltas into its own runner of the script, and ends as
// `k6 run` does: abortOnFail thresholds over the merged metrics, k6's
// end-of-test summary (or handleSummary, run here with the merged data),
// --summary-export, and k6's exit codes. A governed scenario (one at most)
// is judged here by one governor over every agent's window of it, each
// agent's phase following its share of the offer; throttle's report of
// it goes to stderr as on one machine. The agents' table goes to stderr
// and, in the JSON report, the "agents" array.
func (s *Session) RunScriptAgents(sc Script, a Agents) error {
	if len(sc.Outs) > 0 {
		return BadInput{errors.New("--out with --agents is not supported: the agents' metric points are not shipped to the controller (--summary-export and handleSummary are)")}
	}
	if err := CheckPaths(map[string]string{"--summary-export": sc.SummaryExport}); err != nil {
		return err
	}
	con := s.console()
	cfg := sc.Config
	s.scriptOutput(&cfg, con)
	if err := envLimits(&cfg); err != nil {
		return err
	}
	r, err := s.loadScript(sc.Path, cfg)
	if err != nil {
		return err
	}
	var gov *script.Phase
	for _, ph := range r.Phases() {
		if !ph.Governed() {
			continue
		}
		if gov != nil {
			return BadInput{fmt.Errorf("a k6 script with more than one governed scenario (%s, %s) over agents is not supported yet: one governor moves one offer", gov.Name(), ph.Name())}
		}
		gov = ph
	}
	if r.Options().ExecutionSegment != "" {
		return BadInput{errors.New("--execution-segment with --agents: the controller gives each agent its segment")}
	}
	opts := r.Options()
	var grace time.Duration
	for _, scn := range opts.Scenarios {
		grace = max(grace, scn.GracefulStop, scn.GracefulRampDown)
	}
	spec := agent.Spec{Limits: governor.NewLimits(governor.Rate, 1), Fixed: true, Tick: cfg.Tick,
		Grace: grace + opts.TeardownTimeout,
		Script: &agent.ScriptSpec{Archive: r.Archive(), Env: cfg.Env, EnvOptions: cfg.EnvOptions, CLIOptions: cfg.CLIOptions,
			Govern: cfg.Govern, Fixed: cfg.Fixed, Governance: cfg.Governance, Timeout: cfg.Timeout, Insecure: cfg.Insecure, HTTP2: cfg.HTTP2}}
	if len(r.Phases()) == 0 {
		return BadInput{errors.New("the script has no scenario to run")}
	}
	top := r.Phases()[0]
	if gov != nil {
		// One governor here judges the governed scenario's merged window
		// and moves one offer; each agent's phase follows its share.
		spec.Limits, spec.Fixed, top = gov.Limits(), false, gov
	} else {
		// Ungoverned, the windows are the first scenario's as authored (its
		// VUs or rate, fixed), as one process's report of it says.
		spec.Limits = top.Limits()
	}
	if a.Spawn != nil {
		spec.Colocated = a.N // their watches share this machine's cores
		// The local agents share this machine's limit: say here, once,
		// with the remedy in agents, what each would say of itself.
		spec.Script.FilesChecked = true
		if line := agent.FilesWarning(agent.ScriptFilePlan(r, a.N)); line != "" {
			con.Line(line)
		}
	}
	rec, err := report.NewRecorder(spec.Limits.High)
	if err != nil {
		return err
	}
	m := s.metrics()
	if err := m.Start(s.Stderr); err != nil {
		return err
	}
	defer m.Stop()
	var mp *metrics.Phase
	if m.reg != nil {
		name := MainPhase
		if gov != nil {
			name = gov.Name()
		}
		mp = metrics.NewPhase(name, rec)
	}
	var mergeMu sync.Mutex
	var mergeErr error
	log := s.logger(slog.LevelWarn)
	ctl, err := agent.NewController(agent.ControllerConfig{Listen: a.Listen, Token: a.Token, TLS: a.TLS, Agents: a.N, Wait: a.Wait,
		Spec: spec, Settle: cfg.Settle, Governor: cfg.Governor, Version: a.Version, Logger: log, Latency: rec, Observer: observers(rec, mp),
		Started: r.StartMerged, Crossed: r.AbortCrossed,
		K6: func(id string, d *script.Deltas) {
			mergeMu.Lock()
			defer mergeMu.Unlock()
			if err := r.Merge(id, *d); err != nil && mergeErr == nil {
				mergeErr = err
				log.Warn("throttle agent k6 metrics not merged", "err", err)
			}
		}})
	if err != nil {
		return BadInput{err}
	}
	defer ctl.Close()
	if err := m.attachAgents(mp, spec.Limits, ctl); err != nil {
		return err
	}
	fmt.Fprintf(s.Stderr, "throttle controller listening at %s, waiting for %d agent(s) to run %s in %d segments\n", ctl.URL(), a.N, sc.Path, a.N)
	res, err := s.runController(ctl, a, con, grace, rec)
	if err != nil {
		return err
	}
	run, err := r.FinishMerged(&script.RunResult{Start: res.Start, Interrupted: res.Interrupted})
	if err != nil {
		return err
	}
	summary := r.Summary(res.End.Sub(res.Start))
	var first firstErr
	keep := first.keep
	switch {
	case run.HandleSummary:
		keep(run.SummaryErr)
		keep(safely(func() error { return k6out.WriteOutputs(s.Stdout, s.Stderr, run.Outputs) }))
	case !opts.NoSummary:
		k6out.WriteSummary(s.Stdout, summary)
		fmt.Fprintln(s.Stdout)
	}
	// throttle's own report of the merged windows, as on one machine: its
	// text on stderr (after k6's summary) only for a governed run; the
	// JSON report (and --timeline, --chart) always, with the agents.
	in := report.Input{Settings: sc.Settings, Windows: res.Windows, Start: res.Start, End: res.End, Interrupted: res.Interrupted,
		Latency: rec.Summary(), Generator: generatorOf(res.Generator)}
	in.Settings.Limits, in.Settings.Tick, in.Settings.Governed = spec.Limits, ctl.Tick(), gov != nil
	in.Settings.Target = fmt.Sprintf("%s scenario %s over %d agents", filepath.Base(sc.Path), top.Name(), a.N)
	countsInto(&in, res.Counts)
	rep, err := report.Build(in)
	if err != nil {
		return err
	}
	if gov != nil {
		keep(rep.WriteText(s.Stderr))
	}
	writeAgents(s.Stderr, res.Agents)
	keep(s.writeFiles(s.Stderr, rep, saveWithAgents(rep, res.Agents)))
	if sc.SummaryExport != "" {
		err := safely(func() error { return k6out.WriteSummaryExport(sc.SummaryExport, summary) })
		keep(err)
		if err == nil {
			fmt.Fprintf(s.Stderr, "wrote        %s\n", sc.SummaryExport)
		}
	}
	keep(mergeErr)
	if first.err != nil {
		return first.err
	}
	// A Ctrl-C ends the run whatever the agents did after it: an agent cut
	// off on its way out is the interruption's doing, and the agents
	// table above already shows its state.
	if res.Interrupted {
		return ExitCode{Code: ExitExternalAbort, Err: errors.New("the run over agents was interrupted")}
	}
	for _, ag := range res.Agents {
		switch {
		case ag.Err != "":
			return fmt.Errorf("agent %s: %s", ag.ID, ag.Err)
		case ag.Lost:
			return fmt.Errorf("agent %s was lost: its segment %s of the test did not run to its end (the summary is of what the agents sent)", ag.ID, ag.Segment)
		}
	}
	if n := crossed(summary); n > 0 || res.Aborted != "" {
		return ThresholdsCrossed(max(n, 1))
	}
	return nil
}

// loadScript loads a script for a run (with the init notice and Ctrl-C of
// loadInterruptible), its failure worded as the run ends: Ctrl-C 105, an
// init-context exception 107, anything else bad input.
func (s *Session) loadScript(path string, cfg script.Config) (*script.Runner, error) {
	r, err := s.loadInterruptible(path, cfg)
	if errors.Is(err, script.ErrInterrupted) {
		return nil, ExitCode{Code: ExitExternalAbort, Err: err}
	}
	if err != nil {
		if ie := initError(err); ie != nil {
			return nil, ie
		}
		var pe *os.PathError
		if !errors.As(err, new(*bundle.Error)) && errors.As(err, &pe) {
			return nil, BadInput{fmt.Errorf("%s: %v", path, pe.Err)}
		}
		return nil, BadInput{err}
	}
	return r, nil
}

// firstErr keeps the first error of the outputs a run writes: each is
// written even when one before failed.
type firstErr struct{ err error }

func (f *firstErr) keep(err error) {
	if f.err == nil {
		f.err = err
	}
}

// scriptOutput points a script's logger and console.log at the session's
// console, and its handleSummary state at the session's terminals. Secret
// -e values stay out of what throttle writes (its log lines, exception
// lines, the k6 outputs' tags) through the redactor it returns;
// console.log is the script's.
func (s *Session) scriptOutput(cfg *script.Config, con *live.Console) *redactor {
	cfg.StdoutTTY, cfg.StderrTTY = s.StdoutTTY, s.StderrTTY
	red := newRedactor(cfg.Env)
	cfg.Logger = slog.New(red.Handler(s.logger(slog.LevelWarn).Handler())) // quiet: warnings (a throwing iteration) still show
	cfg.Console = func(l slog.Level, msg string) { con.Line(consoleLine(time.Now(), l, msg)) }
	return red
}

// ConsoleLine is a script's console.log line as k6 prints it (for an
// agent's console: `throttle agent` prints its segment's, as every k6
// instance does).
func ConsoleLine(now time.Time, level slog.Level, msg string) string {
	return consoleLine(now, level, msg)
}
