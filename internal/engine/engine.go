package engine

import (
	"context"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/phase"
)

// LatencyRecorder receives the latency of every resolved attempt, measured
// from the attempt's intended start (for an iteration's first attempt the
// arrival's due instant). It is called from every worker at once and must be
// safe for concurrent use and cheap; report.Recorder is one.
type LatencyRecorder interface {
	Record(latency time.Duration)
}

// Counts are the cumulative figures of a phase.
type Counts struct {
	// OK and Failed count resolved attempts, retries included (the
	// attempt plane the governor judges).
	OK, Failed uint64
	// Classes counts resolved attempts by outcome class.
	Classes [NumClasses]uint64
	// IterOK and IterFailed count iterations by their final outcome, after
	// tries: the "ok %" a user would see from a retrying client.
	IterOK, IterFailed uint64
	// Dropped counts rate-mode arrivals that found no free worker.
	Dropped uint64
	// Missed counts rate-mode arrivals the schedule asked for that the
	// generator never made: it fell behind (phase.Counters.Miss).
	Missed uint64
	// Aborted counts attempts cut off by the engine's own stop, neither ok
	// nor failed: they say nothing about the target.
	Aborted uint64
	// Started counts attempts sent; Started − OK − Failed − Aborted are in
	// flight.
	Started uint64
	// ReadDelay sums up how long answers waited in the kernel for the
	// generator to read them (Meter.ReadDelay); zero where no answer was
	// read with the kernel's stamps.
	ReadDelay ReadDelay
}

// ReadDelay is answers' read delay: N answers read with the kernel's
// receive stamps waited Sum in all, the longest Max, between their first
// byte's arrival and its read.
type ReadDelay struct {
	Sum, Max time.Duration
	N        uint64
}

// Snapshot is a live view of a running phase.
type Snapshot struct {
	Elapsed  time.Duration
	Counts   Counts
	InFlight int64
	// Offer is the gate's offer in force; Workers how many workers exist.
	Offer   float64
	Workers int
	// Governor is the governor's state.
	Governor governor.State
	// Generator is the generator's watch of itself at its last tick.
	Generator GeneratorStatus
}

// Result is what a finished phase measured.
type Result struct {
	Config     Config
	Start, End time.Time
	// Interrupted is true when the context ended the phase before its
	// duration.
	Interrupted bool
	// Windows are the governor's closed windows, in order: the newest
	// phase.KeepWindows of them; Earlier sums up the others.
	Windows []governor.Window
	Earlier phase.Earlier
	Counts  Counts
	// Workers is the most workers the phase ran at once.
	Workers int
	// Capacity is the estimate at the failure bound from the settled windows.
	Capacity governor.Estimate
	// Generator sums up the generator's watch of itself over the phase.
	Generator GeneratorSummary
	// Arrivals counts the rate-mode schedule's arrivals: each one is an
	// iteration (ok, failed or aborted) or dropped.
	Arrivals uint64
	// Transport is the transport the attempts went through (Engine.Transport).
	Transport string
	// Panics counts the Go panics (throttle's bugs) recovered in
	// attempts: each failed its attempt, class other (Engine.Panics).
	Panics int64
}

// The generator's watch of itself is the phase runtime's (package phase),
// the same for a URL phase and a script scenario.
type (
	WatchConfig      = phase.WatchConfig
	GeneratorStatus  = phase.GeneratorStatus
	GeneratorSummary = phase.GeneratorSummary
)

// ScheduleSlack is how late the open-loop scheduler may fall behind its
// schedule and still send every arrival it missed (phase.ScheduleSlack).
const ScheduleSlack = phase.ScheduleSlack

// Engine runs one governed HTTP load phase: the phase runtime (package
// phase: gate, governor, schedule, workers, drain, windows, the generator's
// watch) with a worker that sends the targets round-robin. Make it with New,
// watch it with Snapshot while Run runs, and run it once. It implements
// governor.LoadCounters (its Meter's).
type Engine struct {
	cfg    Config
	ph     *phase.Phase
	meter  *Meter
	driver *Driver
	reqs   []Request // one per target, read-only
	panics Panics    // the attempts' recovered Go panics
	// transport is the run's, decided once (transportFor); ev is the event
	// loop's shared state when it is TransportEvLoop.
	transport string
	ev        *evShared
}

// New prepares a phase: it checks cfg, builds the phase runtime and the
// HTTP transport. Nothing is sent until Run.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, meter: NewMeter()}
	e.panics.Logger = cfg.Logger
	transport, addr := transportFor(cfg)
	e.transport = transport
	pc := phase.Config{
		Limits: cfg.Limits, Governed: !cfg.Fixed, Duration: cfg.Duration, MaxWorkers: cfg.MaxVUs, Grace: cfg.Grace,
		Tick: cfg.Tick, Settle: cfg.Settle, Logger: cfg.Logger, Observer: cfg.Observer, Governor: cfg.Governor,
		Watch: cfg.Watch, Counters: e.meter, NewWorker: e.newWorker, Follow: cfg.Follow,
	}
	if transport == TransportEvLoop {
		pc.NewLoop, pc.Loops = e.newLoop, evLoops()
	}
	e.ph, err = phase.New(pc)
	if err != nil {
		return nil, err
	}
	e.cfg.adopt(e.ph.Config())
	e.driver, err = NewDriver(DriverConfig{
		Meter: e.meter, Latency: cfg.Latency, Tries: cfg.Tries, Timeout: cfg.Timeout, FailOn: cfg.FailOn, Slow: cfg.Slow,
		HTTP2: cfg.HTTP2, Insecure: cfg.Insecure, Resolver: cfg.Resolver, Conns: cfg.workers(), Stop: e.ph.Stopping(), Abort: e.ph.Hard(),
		Panics: &e.panics,
	})
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Targets {
		e.reqs = append(e.reqs, Request{Method: t.Method, URL: t.URL.String(), Header: t.Header, Body: t.Body, DiscardBody: true})
	}
	if transport == TransportEvLoop {
		e.ev = newEvShared(e, addr)
	}
	return e, nil
}

// Transport is the transport the run's attempts go through:
// TransportFastHTTP, TransportNetHTTP (--http2) or TransportEvLoop.
func (e *Engine) Transport() string { return e.transport }

// newLoop is the phase's loop factory when the run is on the event loop.
func (e *Engine) newLoop(id int) (phase.Loop, error) { return newEvLoop(e, id) }

// Panics is how many Go panics (throttle's bugs) the run's attempts
// recovered: each failed its attempt, class other.
func (e *Engine) Panics() int64 { return e.panics.Count() }

// Config returns the phase's configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Attempts implements governor.Counters: the resolved attempts so far.
func (e *Engine) Attempts() (ok, failed uint64) { return e.meter.Attempts() }

// Load implements governor.LoadCounters.
func (e *Engine) Load() governor.Load { return e.meter.Load() }

// Meter returns the phase's counters.
func (e *Engine) Meter() *Meter { return e.meter }

// Snapshot returns a live view of the phase. It is safe to call at any time,
// from any goroutine.
func (e *Engine) Snapshot() Snapshot { return SnapshotOf(e.ph, e.meter) }

// SnapshotOf is the live view of a phase runtime and its counters, the
// same for a URL phase and a script scenario.
func SnapshotOf(ph *phase.Phase, m *Meter) Snapshot {
	st := ph.Status()
	return Snapshot{Elapsed: st.Elapsed, Counts: m.Counts(), InFlight: st.InFlight, Offer: st.Offer,
		Workers: st.Workers, Governor: st.Governor, Generator: st.Generator}
}

// Generator sums up the generator's watch of itself so far (what Run's
// Result.Generator will be once the phase ends). It is safe to call at any
// time, from any goroutine: an agent sends it while the phase runs.
func (e *Engine) Generator() GeneratorSummary { return e.ph.Generator() }

// Stopping is closed when the phase stops starting iterations: its grace
// period begins.
func (e *Engine) Stopping() <-chan struct{} { return e.ph.Stopping() }

// Abort cuts off the in-flight attempts of a stopping phase at once instead
// of waiting out the grace period (a second Ctrl-C). Run still returns its
// Result.
func (e *Engine) Abort() { e.ph.Abort() }

// Run runs the phase until its duration passes or ctx ends, whichever is
// first; then it stops new arrivals, waits up to the grace period for
// in-flight iterations (aborting those still running after it), and returns
// what it measured. An interrupted phase still returns its full Result. Run
// may be called once.
func (e *Engine) Run(ctx context.Context) (*Result, error) {
	defer e.driver.Close()
	r, err := e.ph.Run(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Config: e.cfg, Start: r.Start, End: r.End, Interrupted: r.Interrupted, Windows: r.Windows, Earlier: r.Earlier,
		Counts: e.meter.Counts(), Workers: r.Workers, Capacity: r.Capacity, Generator: r.Generator, Arrivals: r.Arrivals, Panics: e.panics.Count(),
		Transport: e.transport}, nil
}
