package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/agent"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
)

// Agents spreads a URL run over generator agents (internal/agent): this
// process is the controller.
type Agents struct {
	// N is how many agents the run waits for (--agents, or --local-agents).
	N int
	// Listen is the embedded NATS server's address (--listen).
	Listen string
	// Token is what agents present (--token).
	Token string
	// Wait bounds the wait for agents (--agent-wait).
	Wait time.Duration
	// Version is this build's; agents of another are refused.
	Version string
	// TLS secures the link to the agents (--tls-cert, --tls-key, --tls-ca).
	TLS agent.TLS
	// Spawn, if set, starts local agents once the server listens, given
	// its address and the token (--local-agents); stop ends them.
	Spawn func(url, token string) (stop func(), err error)
}

// RunAgents runs a URL run over agents, this process the controller: one
// governor judges the merged window of every agent; the report is the
// whole run's, with the agents listed (text, and an "agents" array in the
// JSON report).
func (s *Session) RunAgents(u URL, a Agents) error {
	cfg := u.Engine
	rec, err := report.NewRecorder(cfg.Limits.High)
	if err != nil {
		return BadInput{err}
	}
	con := s.console()
	log := s.logger(slog.LevelWarn)
	m := s.metrics()
	if err := m.Start(s.Stderr); err != nil {
		return err
	}
	defer m.Stop()
	spec := agent.SpecOf(cfg, a.N)
	if a.Spawn != nil {
		spec.Colocated = a.N // their watches share this machine's cores
	}
	mp := m.urlPhase(rec)
	ctl, err := agent.NewController(agent.ControllerConfig{Listen: a.Listen, Token: a.Token, TLS: a.TLS, Agents: a.N, Wait: a.Wait,
		Spec: spec, Settle: cfg.Settle, Governor: cfg.Governor, Version: a.Version, Logger: log, Latency: rec, Observer: observers(rec, mp)})
	if err != nil {
		return BadInput{err}
	}
	defer ctl.Close()
	rec.SetMissed(func() uint64 { return ctl.Counts().Missed }) // the timeline's missed column, merged
	if err := m.attachAgents(mp, cfg.Limits, ctl); err != nil {
		return err
	}
	fmt.Fprintf(s.Stderr, "throttle controller listening at %s, waiting for %d agent(s)\n", ctl.URL(), a.N)
	res, err := s.runController(ctl, a, con, max(spec.Grace, 0), rec)
	if err != nil {
		return err
	}
	in := report.Input{Settings: u.Settings, Windows: res.Windows, Start: res.Start, End: res.End, Interrupted: res.Interrupted,
		Latency: rec.Summary(), Generator: generatorOf(res.Generator)}
	in.Settings.Limits, in.Settings.Tick, in.Settings.Governed = cfg.Limits, spec.Tick, !cfg.Fixed
	countsInto(&in, res.Counts)
	r, err := report.Build(in)
	if err != nil {
		return err
	}
	if err := r.WriteText(s.Stdout); err != nil {
		return err
	}
	writeAgents(s.Stdout, res.Agents)
	return s.writeFiles(s.Stdout, r, saveWithAgents(r, res.Agents))
}

// saveWithAgents writes r's JSON report with the "agents" array.
func saveWithAgents(r *report.Report, agents []agent.AgentInfo) func(path string) error {
	return func(path string) error {
		b, err := json.MarshalIndent(struct {
			*report.Report
			Agents []agent.AgentInfo `json:"agents"`
		}{r, agents}, "", "  ")
		if err != nil {
			return err
		}
		return report.WriteFileAtomic(path, append(b, '\n'))
	}
}

// writeAgents is the text report's per-agent table.
func writeAgents(w io.Writer, agents []agent.AgentInfo) {
	fmt.Fprintf(w, "agents       %d\n", len(agents))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	script := len(agents) > 0 && agents[0].Segment != ""
	if script {
		// A script's agents run their execution segments as authored:
		// no share of an offer.
		fmt.Fprintln(tw, "  agent\tcores\tsegment\titerations\trequests\tfailed\tlate ticks\tstate")
	} else {
		fmt.Fprintln(tw, "  agent\tcores\tattempts\tfailed\tshare\tsaturated ticks\tlate ticks\tstate")
	}
	for _, a := range agents {
		state := "ok"
		switch {
		case a.Err != "":
			state = "failed: " + a.Err
		case a.Lost:
			state = "lost"
		case a.Late:
			state = "joined late"
		}
		if script {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%d\t%d\t%s\n", a.ID, a.Cores, a.Segment, a.Iterations, a.Attempts, a.Failed, a.LateTicks, state)
			continue
		}
		// Saturated ticks are the agent's watch's, out of its watch's
		// ticks; an agent that sent no watch has its deltas for ticks.
		ticks := a.Ticks
		if a.Watch != nil {
			ticks = uint64(a.Watch.Ticks)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%.4g\t%d/%d\t%d\t%s\n", a.ID, a.Cores, a.Attempts, a.Failed, a.Share, a.SaturatedTicks, ticks, a.LateTicks, state)
	}
	_ = tw.Flush()
}

// observers is the controller's window observer: the report's recorder
// and, with --metrics, the phase's exporter.
func observers(rec *report.Recorder, mp *metrics.Phase) func(governor.Window) {
	if mp == nil {
		return rec.Observe
	}
	return func(w governor.Window) { rec.Observe(w); mp.Observe(w) }
}

// attachAgents serves, with --metrics, the run's phase series from the
// controller's merged view (offer, attempts, windows, latency); a no-op
// for a nil p.
func (m *Metrics) attachAgents(p *metrics.Phase, l governor.Limits, ctl *agent.Controller) error {
	if p == nil {
		return nil
	}
	return m.reg.Register(p, metrics.Source{Limits: l, Snapshot: ctl.Snapshot})
}

// runController starts the local agents if any, runs the controller with
// the live view, and stops on Ctrl-C as a run on one machine does (a
// second one aborts the agents' in-flight iterations).
func (s *Session) runController(ctl *agent.Controller, a Agents, con *live.Console, grace time.Duration, rec *report.Recorder) (*agent.Result, error) {
	if a.Spawn != nil {
		stop, err := a.Spawn(ctl.URL(), a.Token)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go live.WatchSignals(s.Signals, done, cancel, ctl.Abort, func() int64 { return ctl.Snapshot().InFlight }, con, grace)
	res, err := watched(s, ctx, ctl.Run, func() live.Reading {
		return live.Reading{Snapshot: ctl.Snapshot(), Mode: ctl.Mode(), Rec: rec, Governed: ctl.Governed()}
	})
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// A signal while the controller waited for its agents: nothing
		// ran, so there is nothing to report; the exit is k6's for a run
		// interrupted from outside, as a script interrupted while it loads.
		return nil, ExitCode{Code: ExitExternalAbort, Err: errors.New("run interrupted by a signal while waiting for the agents: nothing ran")}
	}
	return res, err
}
