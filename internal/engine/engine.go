package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
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
	// Aborted counts attempts cut off by the engine's own stop, neither ok
	// nor failed: they say nothing about the target.
	Aborted uint64
	// Started counts attempts sent; Started − OK − Failed − Aborted are in
	// flight.
	Started uint64
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
	// Windows are the governor's closed windows, in order.
	Windows []governor.Window
	Counts  Counts
	// Workers is the most workers the phase ran at once.
	Workers int
	// Capacity is the estimate at the failure bound from the settled windows.
	Capacity governor.Estimate
	// Generator sums up the generator's watch of itself over the phase.
	Generator GeneratorSummary
}

// Engine runs one governed HTTP load phase. Make it with New, watch it with
// Snapshot while Run runs, and run it once. It implements
// governor.LoadCounters (its Meter's).
type Engine struct {
	cfg    Config
	gate   *gate.Gate
	gov    *governor.Governor
	meter  *Meter
	driver *Driver
	reqs   []Request // one per target, read-only
	watch  *watcher

	arrivals    atomic.Uint64   // rate mode: arrivals the scheduler produced (handed out or dropped)
	startNanos  atomic.Int64    // Run's start, Unix nanoseconds; 0 before Run
	stop        chan struct{}   // closed when the phase stops: no new tries
	hard        context.Context // cancelled to abort in-flight attempts
	abort       context.CancelFunc
	work        chan time.Time // rate mode: due instants handed to idle workers
	workersMu   sync.Mutex     // guards spawning (concurrency mode)
	workerCount atomic.Int64
	wg          sync.WaitGroup
	windowsMu   sync.Mutex
	windows     []governor.Window
	ran         atomic.Bool
}

// ScheduleSlack is how late the open-loop scheduler may fall behind its
// schedule and still send every arrival it missed (each with its own due
// instant, so the lateness shows in the latency). A window of a
// millisecond or two (gate.DefaultBurst) lost 3–5 % of the arrivals at 200–400/s on a busy two-core machine,
// where a goroutine or timer is often woken a few milliseconds late; 10 ms
// keeps the achieved rate at the offer, and bounds the catch-up after a
// longer stall to offer × 10 ms arrivals.
const ScheduleSlack = 10 * time.Millisecond

// New prepares a phase: it checks cfg, builds the gate, the governor and
// the HTTP transport. Nothing is sent until Run.
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l := cfg.Limits
	mode := gate.Rate
	if l.Mode == governor.Concurrency {
		mode = gate.Concurrency
	}
	g, err := gate.New(gate.Config{Mode: mode, Floor: l.Floor, Ceiling: l.Ceiling, Offer: l.Start}, gate.WithBurst(ScheduleSlack))
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, gate: g, meter: NewMeter(), stop: make(chan struct{}), work: make(chan time.Time)}
	e.hard, e.abort = context.WithCancel(context.Background())
	gov, err := governor.New(l, e.meter, append([]governor.Option{
		governor.WithTick(cfg.Tick), governor.WithSettle(cfg.Settle), governor.WithLogger(cfg.Logger), governor.WithObserver(e.observe)},
		cfg.Governor...)...)
	if err != nil {
		return nil, err
	}
	e.gov = gov
	e.driver, err = NewDriver(DriverConfig{
		Meter: e.meter, Latency: cfg.Latency, Tries: cfg.Tries, Timeout: cfg.Timeout, FailOn: cfg.FailOn, Slow: cfg.Slow,
		HTTP2: cfg.HTTP2, Insecure: cfg.Insecure, Conns: cfg.workers(), Stop: e.stop, Abort: e.hard,
	})
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Targets {
		e.reqs = append(e.reqs, Request{Method: t.Method, URL: t.URL.String(), Header: t.Header, Body: t.Body, DiscardBody: true})
	}
	e.watch = newWatcher(cfg.Limits.Mode == governor.Rate, cfg.Watch)
	return e, nil
}

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
func (e *Engine) Snapshot() Snapshot {
	s := Snapshot{
		Counts:    e.meter.Counts(),
		InFlight:  e.meter.InFlight(),
		Offer:     e.gate.Offer(),
		Workers:   int(e.workerCount.Load()),
		Governor:  e.gov.State(),
		Generator: e.watch.status(),
	}
	if n := e.startNanos.Load(); n != 0 {
		s.Elapsed = time.Since(time.Unix(0, n))
	}
	return s
}

// observe runs on the governor's loop at each window close.
func (e *Engine) observe(w governor.Window) {
	e.windowsMu.Lock()
	e.windows = append(e.windows, w)
	e.windowsMu.Unlock()
	if e.cfg.Observer != nil {
		e.cfg.Observer(w)
	}
}

// Abort cuts off the in-flight attempts of a stopping phase at once instead
// of waiting out the grace period (a second Ctrl-C). Run still returns its
// Result.
func (e *Engine) Abort() { e.abort() }

// Run runs the phase until its duration passes or ctx ends, whichever is
// first; then it stops new arrivals, waits up to the grace period for
// in-flight iterations (aborting those still running after it), and returns
// what it measured. An interrupted phase still returns its full Result. Run
// may be called once.
func (e *Engine) Run(ctx context.Context) (*Result, error) {
	if !e.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("engine: Run called twice")
	}
	defer e.abort()
	defer e.driver.Close()

	start := time.Now()
	e.startNanos.Store(start.UnixNano())
	phase, cancelPhase := context.WithCancel(ctx)
	defer cancelPhase()
	if e.cfg.Duration > 0 {
		var cancel context.CancelFunc
		phase, cancel = context.WithTimeout(phase, e.cfg.Duration)
		defer cancel()
	}

	// The governor and its control path. In concurrency mode the applier
	// also grows the worker pool to the applied offer.
	_, stopGov := e.gov.Start(governor.ApplierFunc(func(offer float64) float64 {
		applied := e.gate.Apply(offer)
		if e.cfg.Limits.Mode == governor.Concurrency {
			e.spawnTo(phase, int(math.Ceil(applied)))
		}
		return applied
	}))
	defer stopGov() // a no-op after the stop below; covers a panic on the way

	// The generator's watch of itself, until the governor stops.
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		e.watchLoop(stopWatch)
	}()
	var watchOnce sync.Once
	endWatch := func() { watchOnce.Do(func() { close(stopWatch); <-watchDone }) }
	defer endWatch()

	schedDone := make(chan struct{})
	if e.cfg.Limits.Mode == governor.Concurrency {
		close(schedDone)
		e.spawnTo(phase, int(math.Ceil(e.gate.Offer())))
	} else {
		go func() {
			defer close(schedDone)
			e.schedule(phase)
		}()
	}

	<-phase.Done()
	interrupted := ctx.Err() != nil
	endWatch() // the tick the phase ended in is not the generator's doing

	// Stop: the governor first (no window judged on a draining phase), then
	// arrivals, then retries; then wait out the in-flight iterations.
	stopGov() // returns once the control is closed
	<-schedDone
	close(e.work) // ctl is closed: no apply can spawn a worker any more
	close(e.stop)
	e.drain()

	end := time.Now()
	res := &Result{Config: e.cfg, Start: start, End: end, Interrupted: interrupted, Counts: e.meter.Counts(),
		Workers: int(e.workerCount.Load()), Generator: e.watch.summary()}
	e.windowsMu.Lock()
	res.Windows = append([]governor.Window(nil), e.windows...)
	e.windowsMu.Unlock()
	res.Capacity = governor.Capacity(res.Windows, e.cfg.Limits.High)
	return res, nil
}

// drain waits for the workers up to the grace period, then aborts what is
// still in flight and waits for that to unwind.
func (e *Engine) drain() {
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(done)
	}()
	if e.cfg.Grace > 0 {
		t := time.NewTimer(e.cfg.Grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		case <-e.hard.Done(): // Abort
		}
	}
	e.abort()
	<-done
}

// schedule is the open-loop arrival process: it takes each admission from
// the rate gate and hands its due instant to an idle worker, starting a new
// worker while the pool is below MaxVUs and counting the arrival as dropped
// when it is not.
func (e *Engine) schedule(ctx context.Context) {
	spawned := 0
	for {
		p, err := e.gate.Acquire(ctx)
		if err != nil {
			return
		}
		due := p.Due()
		p.Release()
		e.arrivals.Add(1)
		select {
		case e.work <- due:
			continue
		default:
		}
		if spawned < e.cfg.MaxVUs {
			w := e.newWorker(spawned)
			spawned++
			e.wg.Add(1)
			go w.serve(due)
			continue
		}
		e.meter.Drop()
	}
}

// spawnTo grows the concurrency-mode pool to n workers (never past the
// ceiling). Workers beyond the offer simply wait at the gate.
func (e *Engine) spawnTo(ctx context.Context, n int) {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	for have := int(e.workerCount.Load()); have < n && have < e.cfg.workers(); have++ {
		w := e.newWorker(have)
		e.wg.Add(1)
		go w.loop(ctx)
	}
}
