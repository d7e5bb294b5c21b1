package phase

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// Status is a live view of a running phase.
type Status struct {
	// Elapsed is the time since Run started (to its end once it ended).
	Elapsed time.Duration
	// Offer is the gate's offer in force (0 for a fixed amount of
	// iterations); Ceiling the authored value in force.
	Offer, Ceiling float64
	// Workers is how many workers exist (an open loop's idle ones retire:
	// pool.go); InFlight how many iterations run.
	Workers  int
	InFlight int64
	// Governor is the governor's state (zero without one).
	Governor governor.State
	// Generator is the generator's watch of itself at its last tick.
	Generator GeneratorStatus
}

// Result is what a finished phase measured.
type Result struct {
	Start, End time.Time
	// Interrupted is true when the context ended the phase before its
	// duration (or its iterations).
	Interrupted bool
	// Windows are the governor's closed windows, in order: the newest
	// KeepWindows of them; Earlier sums up the others.
	Windows []governor.Window
	Earlier Earlier
	// Workers is the most workers the phase ran at once.
	Workers int
	// Capacity is the estimate at the failure bound from the settled
	// windows.
	Capacity governor.Estimate
	// Generator sums up the generator's watch of itself over the phase.
	Generator GeneratorSummary
	// Arrivals counts the open-loop schedule's arrivals: each one was
	// started as an iteration or counted as dropped (Counters.Drop).
	// Missed counts those the schedule asked for and the scheduler never
	// made (Counters.Miss). Arrivals + Missed is exactly the schedule's
	// count before the phase's end: at a constant rate r over a duration d,
	// ⌈r × d⌉, k6's count (an arrival at k/r for k/r < d).
	Arrivals, Missed uint64
}

// Phase is one load phase: gate, governor, arrival schedule, workers,
// drain, windows and the generator's watch of itself. Make it with New,
// read it with Status while Run runs, and run it once.
type Phase struct {
	cfg   Config
	clk   clock.Clock
	gate  *gate.Gate         // nil for a fixed amount of iterations
	gov   *governor.Governor // nil for a fixed amount of iterations
	watch *watcher

	stop  chan struct{}   // closed when the phase stops: no new iterations
	hard  context.Context // cancelled to abort in-flight iterations
	abort context.CancelFunc
	work  chan time.Time // open loop: due instants handed to idle workers
	rd    *rampDown      // closed loop on a schedule with RampDownGrace; else nil

	arrivals   atomic.Uint64 // open loop: arrivals the scheduler produced (handed out or dropped)
	missed     atomic.Uint64 // open loop: arrivals missed, counted so far (Counters.Miss)
	inflight   atomic.Int64
	workers    atomic.Int64  // made and not retired
	peak       atomic.Int64  // the most workers at once
	ceilingNow atomic.Uint64 // float64 bits: the authored value in force
	startNanos atomic.Int64  // Run's start on the phase's clock; 0 before
	endNanos   atomic.Int64
	workersMu  sync.Mutex // guards spawning
	wg         sync.WaitGroup
	windowsMu  sync.Mutex
	windows    []governor.Window // the newest KeepWindows (history.go)
	earlier    Earlier           // the windows before them, summed up
	ran        atomic.Bool
	// Closed loop: the summed length and count of the iterations ended so
	// far (staggerSpan).
	iterNanos, iterCount atomic.Int64
	probe                probes // the outage hold's probes (probe.go)
	// A loop host's (loop.go): the closed loop's worker target, and the
	// lanes of the loops started (under workersMu).
	loopTarget atomic.Int64
	loopStarts atomic.Pointer[[]time.Time] // each worker's first due instant (Lane.Due)
	lanes      []*Lane
	pool       pool // the open loop's retirement (pool.go)
}

// New prepares a phase: it checks cfg and builds the gate and the
// governor. Nothing runs until Run.
func New(cfg Config) (*Phase, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Phase{cfg: cfg, clk: cfg.Clock, stop: make(chan struct{}), work: make(chan time.Time)}
	p.pool.quit = make(chan struct{})
	p.hard, p.abort = context.WithCancel(context.Background())
	p.watch = newWatcher(cfg.Limits.Mode == governor.Rate && cfg.Iterations == nil, cfg.Watch)
	l := cfg.Limits
	p.setCeilingNow(l.Ceiling)
	if cfg.RampDownGrace != 0 && cfg.Ceiling != nil && cfg.Iterations == nil && l.Mode == governor.Concurrency {
		p.rd = newRampDown(cfg.RampDownGrace)
	}
	if cfg.Iterations != nil {
		return p, nil
	}
	gfloor, gceiling, start := l.Floor, l.Ceiling, l.Start
	if cfg.Ceiling != nil {
		// The gate's floor is the lowest value a schedule may ask for; the
		// governor's own floor bounds its decisions.
		gfloor = math.Min(gfloor, lowest(l.Mode))
		gceiling = p.authored(0)
		start = math.Min(start, gceiling)
		p.setCeilingNow(gceiling)
	}
	gmode := gate.Rate
	if l.Mode == governor.Concurrency {
		gmode = gate.Concurrency
	}
	p.gate, err = gate.New(gate.Config{Mode: gmode, Floor: gfloor, Ceiling: gceiling, Offer: start},
		gate.WithBurst(ScheduleSlack), gate.WithClock(p.clk))
	if err != nil {
		return nil, err
	}
	if cfg.Follow != nil {
		return p, nil // the offer comes from the Follower: no governor here
	}
	opts := []governor.Option{governor.WithClock(p.clk), governor.WithTick(cfg.Tick), governor.WithSettle(cfg.Settle),
		governor.WithLogger(cfg.Logger), governor.WithObserver(p.observe)}
	if cfg.Name != "" {
		opts = append(opts, governor.WithPhase(cfg.Name))
	}
	p.gov, err = governor.New(l, cfg.Counters, append(opts, cfg.Governor...)...)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// lowest is the least an authored schedule runs at in mode.
func lowest(mode governor.Mode) float64 {
	if mode == governor.Concurrency {
		return 1
	}
	return MinRate
}

// authored is the authored value at elapsed, kept within what the gate
// can run.
func (p *Phase) authored(elapsed time.Duration) float64 {
	c := p.cfg.Limits.Ceiling
	if p.cfg.Ceiling != nil {
		c = math.Min(p.cfg.Ceiling(elapsed), c)
	}
	return math.Max(c, lowest(p.cfg.Limits.Mode))
}

func (p *Phase) setCeilingNow(c float64) { p.ceilingNow.Store(math.Float64bits(c)) }

// Config is the phase's configuration with defaults filled in.
func (p *Phase) Config() Config { return p.cfg }

// Governed reports whether the governor moves the offer.
func (p *Phase) Governed() bool { return p.cfg.Governed && p.gov != nil }

// Stopping is closed when the phase stops starting iterations: an
// iteration's retries end there.
func (p *Phase) Stopping() <-chan struct{} { return p.stop }

// Hard is cancelled when the phase aborts its in-flight iterations.
func (p *Phase) Hard() context.Context { return p.hard }

// Abort cuts off the in-flight iterations of a stopping phase at once
// instead of waiting out the grace period (a second Ctrl-C). Run still
// returns its Result.
func (p *Phase) Abort() {
	p.abort()
	if p.cfg.Aborting != nil {
		p.cfg.Aborting()
	}
}

// Running reports whether the phase has started and not yet ended.
func (p *Phase) Running() bool { return p.startNanos.Load() != 0 && p.endNanos.Load() == 0 }

// Span is when the phase ran; zero times before it started or ended.
func (p *Phase) Span() (start, end time.Time) {
	if n := p.startNanos.Load(); n != 0 {
		start = time.Unix(0, n)
	}
	if n := p.endNanos.Load(); n != 0 {
		end = time.Unix(0, n)
	}
	return start, end
}

// Status returns a live view of the phase, safe to call at any time from
// any goroutine.
func (p *Phase) Status() Status {
	s := Status{
		Ceiling:   math.Float64frombits(p.ceilingNow.Load()),
		Workers:   int(p.workers.Load()),
		InFlight:  p.inflight.Load(),
		Generator: p.watch.status(),
	}
	if p.gate != nil {
		s.Offer = p.gate.Offer()
	}
	if p.gov != nil {
		s.Governor = p.gov.State()
	}
	if n := p.startNanos.Load(); n != 0 {
		end := p.clk.Now()
		if e := p.endNanos.Load(); e != 0 {
			end = time.Unix(0, e)
		}
		s.Elapsed = end.Sub(time.Unix(0, n))
	}
	return s
}

// Windows are the phase's closed governor windows so far: the newest
// KeepWindows of them (Earlier sums up the others).
func (p *Phase) Windows() []governor.Window {
	p.windowsMu.Lock()
	defer p.windowsMu.Unlock()
	return append([]governor.Window(nil), p.windows...)
}

// Earlier sums up the windows that closed before those Windows returns.
func (p *Phase) Earlier() Earlier {
	p.windowsMu.Lock()
	defer p.windowsMu.Unlock()
	e := p.earlier
	e.Outages = append([]Span(nil), e.Outages...)
	return e
}

// Generator sums up the generator's watch of itself so far.
func (p *Phase) Generator() GeneratorSummary { return p.watch.summary() }

// observe runs on the governor's loop at each window close.
func (p *Phase) observe(w governor.Window) {
	p.windowsMu.Lock()
	p.windows = append(p.windows, w)
	if len(p.windows) >= KeepWindows+KeepWindows/4 {
		p.forget(len(p.windows) - KeepWindows)
	}
	p.windowsMu.Unlock()
	p.setOutage()
	if p.cfg.Observer != nil {
		p.cfg.Observer(w)
	}
}

// Run runs the phase until its duration passes, its iterations are done or
// ctx ends, whichever is first; then it stops new iterations, waits up to
// the grace period for those in flight (aborting those still running after
// it), and returns what it measured. Run may be called once.
func (p *Phase) Run(ctx context.Context) (*Result, error) {
	if !p.ran.CompareAndSwap(false, true) {
		return nil, errors.New("the phase was run twice")
	}
	defer p.abort()
	start := p.clk.Now()
	p.startNanos.Store(start.UnixNano())
	open := p.gate != nil && p.cfg.Limits.Mode == governor.Rate
	if open {
		// The schedule is the phase's: its first arrival is due at the
		// start (a scheduler that gets going late is late, not shifted),
		// and none is due at or after the duration's end.
		p.gate.Begin(start)
		if p.cfg.Duration > 0 {
			p.gate.End(start.Add(p.cfg.Duration))
		}
	}
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	timerDone := p.endAfter(run, cancel)

	// The governor and its control path. In closed loop the applier also
	// grows the worker pool to the applied offer.
	var ctl *governor.Control
	stopGov := func() {}
	if p.gov != nil {
		ctl, stopGov = p.gov.Start(governor.ApplierFunc(func(offer float64) float64 {
			applied := p.gate.Apply(offer)
			if p.cfg.Limits.Mode == governor.Concurrency {
				p.spawnTo(run, int(math.Ceil(applied)), p.cfg.Governed)
			}
			return applied
		}))
	}
	if p.cfg.Follow != nil && p.gate != nil {
		stopGov = p.follow(run)
	}
	defer stopGov() // a no-op after the stop below; covers a panic on the way

	// The generator's watch of itself, until the schedule stops.
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		p.watchLoop(stopWatch)
	}()
	var watchOnce sync.Once
	endWatch := func() { watchOnce.Do(func() { close(stopWatch); <-watchDone }) }
	defer endWatch()

	if p.rd != nil {
		p.rd.trim(p.authoredCount(0), start) // an authored 0 starts no iteration, from the first
	}
	rampDone := make(chan struct{})
	go func() {
		defer close(rampDone)
		if p.cfg.Ceiling != nil && p.gate != nil {
			p.ramp(run, start, ctl)
		}
	}()
	schedDone := make(chan struct{})
	switch {
	case p.cfg.Iterations != nil:
		close(schedDone)
		p.iterate(run, cancel)
	case p.cfg.Limits.Mode == governor.Concurrency:
		close(schedDone)
		p.spawnTo(run, int(math.Ceil(p.gate.Offer())), false)
	case p.loops():
		go func() {
			defer close(schedDone)
			p.scheduleLoops(run)
		}()
	default:
		for range min(p.cfg.PreAllocated, p.cfg.MaxWorkers) {
			p.spawn(func(w Worker) bool { return p.serve(w, time.Time{}) })
		}
		go func() {
			defer close(schedDone)
			p.schedule(run)
		}()
	}

	<-run.Done()
	interrupted := ctx.Err() != nil
	if open {
		p.gate.End(p.clk.Now()) // stopped early: the schedule ends here
	}
	endWatch() // the tick the phase ended in is not the generator's doing

	// Stop: the governor first (no window judged on a draining phase), then
	// arrivals, then retries; then wait out the in-flight iterations.
	stopGov()
	<-rampDone
	<-schedDone
	<-timerDone
	if open {
		// Nothing moves the gate any more: what the schedule made due
		// before its end and nobody took is missed too.
		p.noteMissed(p.gate.Missed() + p.gate.Behind(p.clk.Now()))
	}
	p.workersMu.Lock()
	close(p.work) // the control is closed and the schedule done: nothing spawns any more
	p.workersMu.Unlock()
	close(p.stop)
	p.workersMu.Lock()
	p.pokeLanes()
	p.workersMu.Unlock()
	p.drain()

	end := p.clk.Now()
	p.endNanos.Store(end.UnixNano())
	res := &Result{Start: start, End: end, Interrupted: interrupted, Workers: int(p.peak.Load()),
		Windows: p.Windows(), Earlier: p.Earlier(), Generator: p.watch.summary(), Arrivals: p.arrivals.Load(), Missed: p.missed.Load()}
	res.Capacity = governor.Capacity(res.Windows, p.cfg.Limits.High)
	return res, nil
}

// endAfter cancels run after the phase's duration on the phase's clock;
// the returned channel closes when its goroutine is done.
func (p *Phase) endAfter(run context.Context, cancel context.CancelFunc) <-chan struct{} {
	done := make(chan struct{})
	if p.cfg.Duration <= 0 {
		close(done)
		return done
	}
	t := p.clk.NewTimer(p.cfg.Duration)
	go func() {
		defer close(done)
		defer t.Stop()
		select {
		case <-t.C():
			cancel()
		case <-run.Done():
		}
	}()
	return done
}

// drain waits for the workers up to the grace period, then aborts what is
// still in flight and waits for that to unwind.
func (p *Phase) drain() {
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	if p.cfg.Grace > 0 {
		t := p.clk.NewTimer(p.cfg.Grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C():
		case <-p.hard.Done(): // Abort
		}
	}
	p.Abort()
	<-done
}

// noteMissed brings the missed arrivals counted to total, the gate's
// account so far: the watch every tick, Run once at the end.
func (p *Phase) noteMissed(total uint64) {
	for {
		seen := p.missed.Load()
		if total <= seen {
			return
		}
		if p.missed.CompareAndSwap(seen, total) {
			p.cfg.Counters.Miss(total - seen)
			return
		}
	}
}

// rampAt is the instant of an authored schedule whose value holds for the
// RampStep from elapsed on. An open loop the author's stages drive (not
// governed) runs their mean over the step — their value at its middle,
// exact for a linear stage — so its arrivals are the area under the
// stages, as k6's ramping-arrival-rate starts them; the value at the
// step's start would fall short by half a step's climb on every step of a
// ramp up (0 → 1000/s over a minute: 125 arrivals short). Governed, the
// stage's value at each moment is a ceiling the offer never passes.
func (p *Phase) rampAt(elapsed time.Duration) time.Duration {
	if p.cfg.Governed || p.cfg.Limits.Mode != governor.Rate {
		return elapsed
	}
	return elapsed + RampStep/2
}
