package script

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script/options"
)

// ThrottleModule is the module whose import opts a script into the
// governor (k6/x/throttle).
const ThrottleModule = "k6/x/throttle"

// Phase is one scenario as it runs: the phase runtime (package phase: gate,
// governor, schedule, VUs, drain, windows, the generator's watch) with a
// VU as its worker, and the cumulative counters of its attempt plane. The
// counters are the governor's evidence (Attempts, Load) and the report's
// figures.
type Phase struct {
	r  *Runner
	sc options.Scenario
	rt *phase.Phase
	// limits are the governor's (or, not governed, the authored value
	// pinned as floor, start and ceiling, for the report's settings).
	limits   governor.Limits
	governed bool // the governor moves the offer
	rec      *report.Recorder

	// meter is the phase's attempt plane: every request of its VUs is
	// counted there by the engine's runners, and the governor reads it.
	meter      *engine.Meter
	stop       <-chan struct{} // closed when the phase stops scheduling
	hard       context.Context // cancelled to abort in-flight attempts
	inflight   atomic.Int64    // iterations in flight
	iterations atomic.Uint64   // scenario.iterationInTest: iterations started
	vus        atomic.Int64    // VUs made
	vuList     []*VU           // guarded by vuMu
	pre        premade         // made before the run (premade.go); guarded by vuMu
	vuMu       sync.Mutex
	checks     checks
	// env is __ENV's table for the phase's VUs (Runner.envTable).
	envOnce sync.Once
	env     map[string]func(any) any
}

// Name is the scenario's name.
func (p *Phase) Name() string { return p.sc.Name }

// Scenario is the scenario the phase runs.
func (p *Phase) Scenario() options.Scenario { return p.sc }

// Limits are the phase's governor limits.
func (p *Phase) Limits() governor.Limits { return p.limits }

// Governed reports whether the governor moves the phase's offer.
func (p *Phase) Governed() bool { return p.governed }

// Recorder is the phase's latency recorder.
func (p *Phase) Recorder() *report.Recorder { return p.rec }

// Running reports whether the phase has started and not yet ended.
func (p *Phase) Running() bool { return p.rt.Running() }

// Attempts is the governor's view of the counters (governor.Counters).
func (p *Phase) Attempts() (ok, failed uint64) { return p.meter.Attempts() }

// Load is the evidence beyond attempts (governor.LoadCounters).
func (p *Phase) Load() governor.Load { return p.meter.Load() }

// Counts reads the phase's cumulative counters.
func (p *Phase) Counts() engine.Counts { return p.meter.Counts() }

// Snapshot is a live view of the phase, in the engine's terms so that the
// CLI's live view serves both.
func (p *Phase) Snapshot() engine.Snapshot { return engine.SnapshotOf(p.rt, p.meter) }

// Generator sums up the generator's watch of itself over the phase.
func (p *Phase) Generator() engine.GeneratorSummary { return p.rt.Generator() }

// State is k6/x/throttle's state(): the phase's offer, ceiling, last-bad
// and last signal.
func (p *Phase) State() (offer, ceiling float64, lastBad float64, signal string) {
	st := p.rt.Status()
	offer, ceiling = st.Offer, p.limits.Ceiling
	if !p.governed {
		return offer, ceiling, 0, "not-governed"
	}
	lastBad, signal = st.Governor.LastBad, st.Governor.Last.Signal.String()
	if st.Governor.Windows == 0 {
		signal = "starting"
	}
	return offer, ceiling, lastBad, signal
}

// Saturated is the phase's watch's verdict now: the generator, not the
// target, limits it; and the attempt rate it reached then.
func (p *Phase) Saturated() (bool, float64) { return p.meter.Saturated() }

// Windows are the phase's closed governor windows.
func (p *Phase) Windows() []governor.Window { return p.rt.Windows() }

// Earlier sums up the windows before those Windows returns (a scenario
// holds only its newest phase.KeepWindows).
func (p *Phase) Earlier() phase.Earlier { return p.rt.Earlier() }

// Span is when the phase ran; zero times when it never started.
func (p *Phase) Span() (start, end time.Time) { return p.rt.Span() }

// governs reports whether the run's scenarios are governed: the script
// imports k6/x/throttle or the user asked (--govern), and not --no-governor.
// Otherwise every executor runs as authored, as k6 runs it.
func (r *Runner) governs() bool {
	return !r.cfg.Fixed && (r.cfg.Govern || slices.Contains(r.bundle.Modules, ThrottleModule))
}

// newPhase prepares a scenario's phase. Nothing runs until run.
func (r *Runner) newPhase(sc options.Scenario) (*Phase, error) {
	p := &Phase{r: r, sc: sc, meter: engine.NewMeter()}
	mode := governor.Concurrency
	if sc.RateMode() {
		mode = governor.Rate
	}
	p.governed = sc.Governed() && r.governs()
	l, err := r.limits(sc.Name, mode, sc.MaxCeiling(), p.governed)
	if err != nil {
		return nil, err
	}
	follow := p.governed && r.cfg.Follow != nil
	if follow {
		// An agent's share of a controller's offer may lie anywhere from
		// the least a gate runs to the scenario's ceiling: the controller's
		// governor holds the run's own floor and start.
		l.Floor = math.Min(phase.MinRate, l.Ceiling)
		if mode == governor.Concurrency {
			l.Floor = math.Min(1, l.Ceiling)
		}
		l.Start = l.Floor
	}
	p.limits = l
	if p.rec, err = report.NewRecorder(l.High); err != nil {
		return nil, err
	}
	p.rec.SetMissed(func() uint64 { return p.meter.Counts().Missed }) // the timeline's missed column
	grace := sc.GracefulStop
	if grace <= 0 {
		grace = -1 // no wait: the phase runtime's zero is its default
	}
	cfg := phase.Config{
		Name: sc.Name, Limits: l, Governed: p.governed, Duration: sc.Length(), Grace: grace,
		MaxWorkers: sc.MaxVUs, PreAllocated: sc.PreAllocatedVUs, KeepWorkers: true, // k6 keeps the VUs it made
		Tick: r.cfg.Tick, Settle: r.cfg.Settle, Logger: r.cfg.Logger, Observer: p.rec.Observe, Governor: r.cfg.Governor,
		Watch: r.cfg.Watch, Counters: p.meter, NewWorker: p.newWorker,
		// A VU still waiting for its init slot when the phase aborts is
		// not made, and that is no failure. Nor is one whose init context
		// hit a Go panic (throttle's bug, logged and counted where it was
		// recovered): that VU is lost, the others run on.
		WorkerFailed: func(err error) {
			if !errors.Is(err, errAborted) && !errors.As(err, new(*HostPanic)) {
				r.fail(err)
			}
		},
		Dropped: func() {
			_ = r.builtin.droppedIterations.addTagged(sc.Name, 1, func() map[string]string { return map[string]string{"scenario": sc.Name} })
		},
		Aborting: p.interruptVUs,
	}
	if follow {
		cfg.Follow = r.cfg.Follow
	}
	switch sc.Executor {
	case options.RampingArrivalRate, options.RampingVUs:
		cfg.Ceiling = sc.Ceiling
		if sc.Executor == options.RampingVUs {
			// A VU a falling stage removes finishes its iteration within
			// gracefulRampDown; 0s cuts it off at once.
			cfg.RampDownGrace = sc.GracefulRampDown
			if cfg.RampDownGrace <= 0 {
				cfg.RampDownGrace = -1
			}
		}
	case options.PerVUIterations, options.SharedIterations:
		cfg.Iterations = &phase.Iterations{Count: sc.Iterations, PerWorker: sc.Executor == options.PerVUIterations, Workers: sc.VUs}
	}
	if p.rt, err = phase.New(cfg); err != nil {
		return nil, err
	}
	p.stop, p.hard = p.rt.Stopping(), p.rt.Hard()
	return p, nil
}

// vuWorker runs a VU as the phase runtime's worker.
type vuWorker struct{ *VU }

func (w vuWorker) Iterate(time.Time) { w.iteration() }
func (w vuWorker) Close()            { w.close() }
func (w vuWorker) Interrupt()        { w.interrupt() } // gracefulRampDown ran out

// initSlots bounds how many VUs run their init context at once, in the
// whole process. A constant-vus scenario starts all its VUs together:
// 100 000 runtimes half-built side by side made the heap (and the GC's
// work) peak and the first VU finish last; taken a few at a time, each VU
// is built while its memory is hot and starts its iterations as soon as
// it is. 64, not the core count: a VU whose init context awaits a timer
// holds its slot meanwhile.
var initSlots = make(chan struct{}, 64)

// newWorker hands out the phase's next VU made before the run
// (premade.go), or, with none left, makes one (runs the init context) on
// the goroutine that will run it.
func (p *Phase) newWorker(int) (phase.Worker, error) {
	vu, lost := p.takePremade()
	if lost != nil {
		return nil, lost
	}
	if vu != nil {
		if err := vu.takeSetupData(); err != nil {
			vu.close()
			return nil, err
		}
		p.vuMu.Lock()
		p.vuList = append(p.vuList, vu)
		p.vuMu.Unlock()
		return vuWorker{vu}, nil
	}
	p.vus.Add(1)
	initGC.enter(p.r.cfg.MemoryBound, p.r.cfg.MemoryShare)
	defer initGC.leave()
	select {
	case initSlots <- struct{}{}:
	case <-p.hard.Done():
		return nil, errAborted
	}
	vu, err := p.r.newVU(p)
	<-initSlots
	if err != nil {
		return nil, err
	}
	p.vuMu.Lock()
	p.vuList = append(p.vuList, vu)
	p.vuMu.Unlock()
	return vuWorker{vu}, nil
}

// run runs the phase until its scenario's schedule ends or ctx does, then
// stops scheduling, gives in-flight iterations the graceful stop and aborts
// what is left.
func (p *Phase) run(ctx context.Context) { _, _ = p.rt.Run(ctx) }

// abortVUs cuts off every in-flight attempt and interrupts the VUs'
// JavaScript.
func (p *Phase) abortVUs() { p.rt.Abort() }

// interruptVUs interrupts the VUs' JavaScript (the phase runtime cancels
// their attempts).
func (p *Phase) interruptVUs() {
	p.vuMu.Lock()
	defer p.vuMu.Unlock()
	for _, vu := range p.vuList {
		vu.rt.Interrupt(errAborted)
		vu.pause.Wake() // a sleep() under way ends: the phase's hard context is cancelled (VU.sleep)
	}
}
