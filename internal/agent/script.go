package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/bundle"
	"github.com/throttlekit/throttle/internal/script/options"
)

// ScriptSpec is a k6 script run as the controller ships it: the script as
// one archive (its modules and open()ed files: an agent reads nothing of
// its own) and what resolves its options, the same for every agent. Each
// agent runs the execution segment its Welcome names, so that together
// they run the authored test (options.Segment).
type ScriptSpec struct {
	Archive *bundle.Archive `json:"archive"`
	// Env is -e's __ENV. Under it, as k6 puts the process environment,
	// is the agent's own environment (as a k6-operator runner has its
	// pod's): the controller's is never shipped.
	Env map[string]string `json:"env,omitempty"`
	// EnvOptions and CLIOptions are the controller's K6_* variables and
	// k6 flags, resolved over the script's options on every agent.
	EnvOptions options.Flags `json:"env_options"`
	CLIOptions options.Flags `json:"cli_options"`
	// Sequence is the run's execution segment sequence ("0,1/3,2/3,1").
	Sequence string `json:"sequence"`
	// Govern, Fixed and Governance are the command line's (--govern,
	// --no-governor, the governor flags): they decide which scenario is
	// governed, on the agents as on the controller.
	Govern     bool              `json:"govern,omitempty"`
	Fixed      bool              `json:"fixed,omitempty"`
	Governance script.Governance `json:"governance"`
	Timeout    time.Duration     `json:"timeout,omitempty"`
	Insecure   bool              `json:"insecure,omitempty"`
	HTTP2      bool              `json:"http2,omitempty"`
	// FilesChecked: the controller judged the agents' open-file limit
	// (--local-agents: its machine's, with the remedy in agents) and said
	// what it had to; a remote agent judges its own.
	FilesChecked bool `json:"files_checked,omitempty"`
}

// Config is the script configuration an agent runs its segment with.
func (s *ScriptSpec) Config(segment string, log *slog.Logger) (script.Config, error) {
	cfg := script.Config{Archive: s.Archive, Env: s.Env, EnvOptions: s.EnvOptions, CLIOptions: s.CLIOptions, Deltas: true,
		Govern: s.Govern, Fixed: s.Fixed, Governance: s.Governance, Timeout: s.Timeout, Insecure: s.Insecure, HTTP2: s.HTTP2, Logger: log}
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	cfg.SystemEnv = map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != tokenEnv {
			cfg.SystemEnv[k] = v
		}
	}
	if err := cfg.CLIOptions.Set("execution-segment", segment); err != nil {
		return cfg, err
	}
	if err := cfg.CLIOptions.Set("execution-segment-sequence", s.Sequence); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// tokenEnv is where `throttle agent` reads the run's token: never the
// script's to see.
const tokenEnv = "THROTTLE_TOKEN"

// scriptAgent runs its segment of a k6 script for the controller.
type scriptAgent struct {
	id  string
	nc  *nats.Conn
	lat *Latencies
	r   *script.Runner
	// gov is the governed scenario's phase (nil: none): it follows the
	// controller's share, and its counters alone are the agent's deltas,
	// the window the controller's governor judges.
	gov *script.Phase
	// top is the phase whose watch of the process speaks for the agent,
	// as one process's report takes it (the governed one, else the
	// first): every phase watches the same process, so their watches are
	// not summed. nil for a segment with no scenario.
	top *script.Phase
}

// joinScript loads the shipped script for w's segment, says it is ready,
// and runs it from the controller's start until it ends or is stopped.
func joinScript(ctx context.Context, nc *nats.Conn, w Welcome, closed <-chan struct{}, memory int64, turn script.GCTurn, log *slog.Logger, console func(slog.Level, string)) (*Summary, error) {
	cfg, err := w.Spec.Script.Config(w.Segment, log)
	if err != nil {
		return nil, fmt.Errorf("the run's script: %w", err)
	}
	cfg.MemoryShare = w.Spec.Colocated // local agents share this machine's memory too
	guard := segmentMemory(memory, w.Spec.Colocated)
	cfg.MemoryBound = guard.Limit
	if guard.Limit > 0 {
		// The guard's bound is also the agent's GC's soft limit.
		defer script.BindMemory(guard.Limit, cfg.MemoryShare)()
	}
	// From before the VUs are made: the turns see the settling cycle end
	// (and wait out the hold), so the first runway starts there.
	defer script.StartGCTurns(turn)()
	cfg.Console = console
	cfg.Watch.Colocated = w.Spec.Colocated
	a := &scriptAgent{id: w.ID, nc: nc, lat: NewLatencies()}
	fol := &agent{id: w.ID, shares: make(chan float64, 1), heard: make(chan struct{}, 1)}
	cfg.Follow = fol
	governed := "" // the governed scenario's name, set before the run
	cfg.Points = func(m *script.Metric, v float64, tags map[string]string) {
		if m.Name == "http_req_duration" && (governed == "" || tags["scenario"] == governed) {
			a.lat.Record(time.Duration(v * float64(time.Millisecond)))
		}
	}
	if a.r, err = script.Load(w.Spec.Script.Archive.Entry, cfg); err != nil {
		return nil, fmt.Errorf("the run's script: %w", err)
	}
	for _, p := range a.r.Phases() {
		if p.Governed() {
			a.gov, governed = p, p.Name()
		}
	}
	a.top = a.gov
	if ps := a.r.Phases(); a.top == nil && len(ps) > 0 {
		a.top = ps[0]
	}
	if !w.Spec.Script.FilesChecked {
		plan := ScriptFilePlan(a.r, 1)
		plan.Agent = w.ID + ", segment " + w.Segment
		if line := FilesWarning(plan); line != "" {
			log.Warn(line)
		}
	}
	log.Info("throttle agent joined", "as", w.ID, "segment", w.Segment)
	// The guard watches while the VUs are made and the segment runs: past
	// its bound the segment stops as an abort stops it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	outOfMemory := guard.Watch(done, func(line string) { log.Warn("throttle agent " + w.ID + ": " + line) },
		func() { cancel(); a.r.Abort(); a.r.Interrupt() })
	sig, err := subscribe(nc, w.ID, a.r.Abort, fol)
	if err != nil {
		return nil, err
	}
	defer sig.close()
	// The segment's VUs are made before the agent says it is ready (k6
	// runs every VU's init before setup): the controller starts its agents
	// together, each with its VUs made. A stop meanwhile ends it as one
	// before the start.
	if err := makeVUs(ctx, a.r, sig.stop, closed, func() { _ = nc.Publish(subjMaking, []byte(w.ID)) }); err != nil {
		select {
		case <-sig.stop:
			return &Summary{ID: w.ID, Stopped: "stopped before the start"}, nil
		default:
		}
		if outOfMemory.Load() {
			return nil, fmt.Errorf("making the VUs: %w", memoryError(guard, a.r))
		}
		return nil, fmt.Errorf("the run's script: %w", err)
	}
	if err := nc.Publish(subjReady, []byte(w.ID)); err != nil {
		return nil, err
	}
	_ = nc.Flush()
	select {
	case <-sig.start:
	case <-sig.stop:
		return &Summary{ID: w.ID, Stopped: "stopped before the start"}, nil
	case <-closed:
		return nil, fmt.Errorf("the connection to the controller closed before the start")
	case <-ctx.Done():
		if outOfMemory.Load() {
			return nil, memoryError(guard, a.r)
		}
		return nil, ctx.Err()
	}
	log.Info("throttle agent started", "as", w.ID, "segment", w.Segment)
	every := w.Spec.Every
	if every <= 0 {
		every = w.Spec.Tick
	}
	run := func(ctx context.Context) error {
		_, err := a.r.Run(ctx)
		if outOfMemory.Load() {
			return memoryError(guard, a.r)
		}
		return err
	}
	return a.run(ctx, run, every, w.Spec.Tick, w.Spec.silence(), sig, closed, log)
}

// counted are the phases the agent's counters sum: the governed one, else
// every one.
func (a *scriptAgent) counted() []*script.Phase {
	if a.gov != nil {
		return []*script.Phase{a.gov}
	}
	return a.r.Phases()
}

// counts sums the script's phases, or is the governed one's: the agent's
// counters.
func (a *scriptAgent) counts() (engine.Counts, governor.Load) {
	var c engine.Counts
	var l governor.Load
	for _, p := range a.counted() {
		pc, pl := p.Counts(), p.Load()
		c.OK, c.Failed, c.IterOK, c.IterFailed = c.OK+pc.OK, c.Failed+pc.Failed, c.IterOK+pc.IterOK, c.IterFailed+pc.IterFailed
		c.Dropped, c.Missed, c.Aborted, c.Started = c.Dropped+pc.Dropped, c.Missed+pc.Missed, c.Aborted+pc.Aborted, c.Started+pc.Started
		for i := range c.Classes {
			c.Classes[i] += pc.Classes[i]
		}
		c.ReadDelay.Sum, c.ReadDelay.N = c.ReadDelay.Sum+pc.ReadDelay.Sum, c.ReadDelay.N+pc.ReadDelay.N
		c.ReadDelay.Max = max(c.ReadDelay.Max, pc.ReadDelay.Max)
		l.Latency += pl.Latency
		l.Unreachable += pl.Unreachable
	}
	return c, l
}

// run runs the script's segment (run, whose error the last delta carries)
// and ships its deltas every tick until it ends; its k6 metrics go once a
// tick (and with the last delta): the governor's reads between need only
// the counters.
func (a *scriptAgent) run(ctx context.Context, run func(context.Context) error, every, tick, silent time.Duration, sig *signals, closed <-chan struct{}, log *slog.Logger) (*Summary, error) {
	sh := &shipper{id: a.id, nc: a.nc}
	var lastK6 time.Time
	send := func(final bool, errText string) {
		c, l := a.counts()
		d := sh.delta(c, l, final, errText)
		if a.top != nil {
			// The verdict of the agent's watch of itself, governed or not:
			// an ungoverned run's report says whether its generators kept up.
			d.Saturated, d.SatRate = a.top.Saturated()
		}
		for _, p := range a.counted() {
			snap := p.Snapshot()
			d.InFlight, d.Workers = d.InFlight+snap.InFlight, d.Workers+snap.Workers
		}
		if h, err := a.lat.Take(); err == nil {
			d.Hist = h
		}
		if final || time.Since(lastK6) >= tick {
			lastK6 = time.Now()
			if a.top != nil {
				d.Watch = watchOf(a.top.Generator())
			}
			if k := a.r.TakeDeltas(); len(k.Metrics) > 0 || len(k.Checks) > 0 {
				d.K6 = &k
			}
		}
		_ = a.nc.Publish(subjTick, encode(d))
	}
	why, err := ship(ctx, run, send, every, silent, sig.heard, sig.stop, closed, func() { _ = a.nc.FlushTimeout(5 * time.Second) })
	c, _ := a.counts()
	return stopped(log, a.id, why, "the script ended", c.OK+c.Failed), err
}

// signals are the controller's start, stop and heartbeat as channels.
type signals struct {
	start, stop chan struct{}
	heard       chan struct{}
	subs        []*nats.Subscription
}

// subscribe listens for the controller's start (the run's or this agent's
// own), stop, offers (its heartbeat, and the governed phase's shares for
// fol) and abort, which calls abort once.
func subscribe(nc *nats.Conn, id string, abort func(), fol *agent) (*signals, error) {
	s := &signals{start: make(chan struct{}), stop: make(chan struct{}), heard: fol.heard}
	var startOnce, stopOnce, abortOnce sync.Once
	handlers := map[string]nats.MsgHandler{
		subjStart:            func(*nats.Msg) { startOnce.Do(func() { close(s.start) }) },
		subjStart + "." + id: func(*nats.Msg) { startOnce.Do(func() { close(s.start) }) },
		subjStop:             func(*nats.Msg) { stopOnce.Do(func() { close(s.stop) }) },
		subjAbort: func(*nats.Msg) {
			stopOnce.Do(func() { close(s.stop) })
			abortOnce.Do(abort)
		},
		subjOffer: fol.onOffer,
	}
	for subj, h := range handlers {
		sub, err := nc.Subscribe(subj, h)
		if err != nil {
			s.close()
			return nil, err
		}
		s.subs = append(s.subs, sub)
	}
	return s, nil
}

func (s *signals) close() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
}

// makeVUs makes the script's VUs (script.Runner.MakeVUs) until ctx ends or
// stop or closed closes, calling making every makingEvery meanwhile (the
// controller's wait for its agents starts again at each).
func makeVUs(ctx context.Context, r *script.Runner, stop, closed <-chan struct{}, making func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		tick := time.NewTicker(makingEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
			case <-closed:
			case <-ctx.Done():
			case <-tick.C:
				making()
				continue
			}
			cancel()
			return
		}
	}()
	return r.MakeVUs(ctx)
}
