package script

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script/options"
)

// Phase is one scenario as it runs: its own gate, governor (for the
// governed executors) and window evidence, its VUs, and the cumulative
// counters of its attempt plane. The counters are the governor's evidence
// (Attempts, Load) and the report's figures.
type Phase struct {
	r  *Runner
	sc options.Scenario
	// limits are the governor's (or, not governed, the authored value
	// pinned as floor, start and ceiling, for the report's settings).
	limits   governor.Limits
	governed bool // the governor moves the offer
	fixed    bool // a governed executor run as authored (--no-governor)
	gate     *gate.Gate
	gov      *governor.Governor
	rec      *report.Recorder

	// meter is the phase's attempt plane: every request of its VUs is
	// counted there by the engine's runners, and the governor reads it.
	meter      *engine.Meter
	inflight   atomic.Int64  // iterations in flight
	iterations atomic.Uint64 // scenario.iterationInTest: iterations started
	vus        atomic.Int64  // VUs made

	startNanos atomic.Int64
	endNanos   atomic.Int64
	stop       chan struct{}      // closed when the phase stops scheduling
	hard       context.Context    // cancelled to abort in-flight attempts
	abort      context.CancelFunc //
	vuList     []*VU              // guarded by vuMu
	vuMu       sync.Mutex
	windowsMu  sync.Mutex
	windows    []governor.Window
	checks     checks
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
func (p *Phase) Running() bool { return p.startNanos.Load() != 0 && p.endNanos.Load() == 0 }

// Attempts is the governor's view of the counters (governor.Counters).
func (p *Phase) Attempts() (ok, failed uint64) { return p.meter.Attempts() }

// Load is the evidence beyond attempts (governor.LoadCounters).
func (p *Phase) Load() governor.Load { return p.meter.Load() }

// Counts reads the phase's cumulative counters.
func (p *Phase) Counts() engine.Counts { return p.meter.Counts() }

// Snapshot is a live view of the phase, in the engine's terms so that the
// CLI's live view serves both.
func (p *Phase) Snapshot() engine.Snapshot {
	s := engine.Snapshot{Counts: p.Counts(), InFlight: p.inflight.Load(), Workers: int(p.vus.Load())}
	if p.gate != nil {
		s.Offer = p.gate.Offer()
	}
	if p.gov != nil {
		s.Governor = p.gov.State()
	}
	if n := p.startNanos.Load(); n != 0 {
		end := time.Now()
		if e := p.endNanos.Load(); e != 0 {
			end = time.Unix(0, e)
		}
		s.Elapsed = end.Sub(time.Unix(0, n))
	}
	return s
}

// State is k6/x/throttle's state(): the phase's offer, ceiling, last-bad
// and last signal.
func (p *Phase) State() (offer, ceiling, lastBad float64, signal string) {
	if p.gate != nil {
		offer = p.gate.Offer()
	}
	ceiling = p.limits.Ceiling
	if p.gov != nil {
		st := p.gov.State()
		lastBad, signal = st.LastBad, st.Last.Signal.String()
		if st.Windows == 0 {
			signal = "starting"
		}
	} else {
		signal = "not-governed"
	}
	return offer, ceiling, lastBad, signal
}

// Windows are the phase's closed governor windows.
func (p *Phase) Windows() []governor.Window {
	p.windowsMu.Lock()
	defer p.windowsMu.Unlock()
	return append([]governor.Window(nil), p.windows...)
}

func (p *Phase) observe(w governor.Window) {
	p.windowsMu.Lock()
	p.windows = append(p.windows, w)
	p.windowsMu.Unlock()
	p.rec.Observe(w)
}

// newPhase prepares a scenario's phase: limits, gate and governor. Nothing
// runs until run.
func (r *Runner) newPhase(sc options.Scenario) (*Phase, error) {
	p := &Phase{r: r, sc: sc, stop: make(chan struct{}), meter: engine.NewMeter()}
	p.hard, p.abort = context.WithCancel(context.Background())
	mode := governor.Concurrency
	if sc.RateMode() {
		mode = governor.Rate
	}
	ceiling := sc.MaxCeiling()
	p.governed = sc.Governed() && !r.cfg.Fixed
	p.fixed = sc.Governed() && r.cfg.Fixed
	l, err := r.limits(sc.Name, mode, ceiling, p.governed)
	if err != nil {
		return nil, err
	}
	p.limits = l
	rec, err := report.NewRecorder(l.High)
	if err != nil {
		return nil, err
	}
	p.rec = rec
	if !sc.Governed() {
		return p, nil
	}
	// The gate's floor is the lowest value a ramp may ask for; the
	// governor's own floor bounds its decisions.
	gfloor := l.Floor
	if sc.Executor == options.RampingArrivalRate {
		gfloor = math.Min(gfloor, minRate)
	}
	gmode := gate.Rate
	if mode == governor.Concurrency {
		gmode, gfloor = gate.Concurrency, 1
	}
	start := l.Start
	if p.fixed {
		start = math.Max(sc.Ceiling(0), gfloor)
	}
	g, err := gate.New(gate.Config{Mode: gmode, Floor: gfloor, Ceiling: math.Max(math.Max(sc.Ceiling(0), gfloor), start), Offer: start}, gate.WithBurst(engine.ScheduleSlack))
	if err != nil {
		return nil, err
	}
	p.gate = g
	gl := l
	if p.fixed {
		// Run as authored: a governor pinned at the ceiling still judges and
		// records the windows, so the report has a timeline.
		gl.Floor, gl.Start = gl.Ceiling, gl.Ceiling
	}
	gopts := append([]governor.Option{governor.WithTick(r.cfg.Tick), governor.WithSettle(r.cfg.Settle),
		governor.WithLogger(r.cfg.Logger), governor.WithPhase(sc.Name), governor.WithObserver(p.observe)}, r.cfg.Governor...)
	gov, err := governor.New(gl, p, gopts...)
	if err != nil {
		return nil, err
	}
	p.gov = gov
	return p, nil
}

// minRate is the lowest rate a ramping-arrival-rate stage runs at: a stage
// ramping to 0 still admits an arrival every 100 s, not none.
const minRate = 0.01

// run runs the phase until its scenario's schedule ends or ctx does, then
// stops scheduling, gives in-flight iterations the graceful stop and aborts
// what is left.
func (p *Phase) run(ctx context.Context) {
	start := time.Now()
	p.startNanos.Store(start.UnixNano())
	defer func() { p.endNanos.Store(time.Now().UnixNano()) }()
	phase, cancel := context.WithTimeout(ctx, p.sc.Length())
	defer cancel()

	var wg sync.WaitGroup // the VUs
	var stopGov func()
	var ctl *governor.Control
	if p.gov != nil {
		ctl, stopGov = p.gov.Start(governor.ApplierFunc(func(offer float64) float64 {
			applied := p.gate.Apply(offer)
			if p.limits.Mode == governor.Concurrency {
				p.spawnTo(phase, &wg, int(math.Ceil(applied)))
			}
			return applied
		}))
		defer stopGov()
	}
	rampDone := make(chan struct{})
	go func() {
		defer close(rampDone)
		if p.sc.Executor == options.RampingArrivalRate || p.sc.Executor == options.RampingVUs {
			p.ramp(phase, start, ctl, &wg)
		}
	}()

	schedDone := make(chan struct{})
	work := make(chan struct{})
	switch {
	case p.sc.RateMode():
		for range p.sc.PreAllocatedVUs {
			p.spawn(&wg, func(vu *VU) { vu.serve(work) })
		}
		go func() {
			defer close(schedDone)
			p.schedule(phase, work, &wg)
		}()
	case p.gate != nil:
		close(schedDone)
		p.spawnTo(phase, &wg, int(math.Ceil(p.gate.Offer())))
	default:
		close(schedDone)
		p.iterate(phase, &wg, cancel)
	}

	<-phase.Done()
	if stopGov != nil {
		stopGov()
	}
	<-rampDone
	<-schedDone
	close(work)
	close(p.stop)
	p.drain(&wg)
}

// drain waits for the VUs up to the graceful stop, then aborts what is
// still in flight (attempts and JavaScript alike) and waits for that.
func (p *Phase) drain(wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(p.sc.GracefulStop)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	case <-p.hard.Done():
	}
	p.abortVUs()
	<-done
}

// abortVUs cuts off every in-flight attempt and interrupts the VUs'
// JavaScript.
func (p *Phase) abortVUs() {
	p.abort()
	p.vuMu.Lock()
	defer p.vuMu.Unlock()
	for _, vu := range p.vuList {
		vu.rt.Interrupt(errAborted)
	}
}

// spawn starts one VU of the phase on its own goroutine: it is made (its
// init context run) there, then body runs it.
func (p *Phase) spawn(wg *sync.WaitGroup, body func(*VU)) {
	p.vus.Add(1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		vu, err := p.r.newVU(p)
		if err != nil {
			p.r.fail(err)
			return
		}
		p.vuMu.Lock()
		p.vuList = append(p.vuList, vu)
		aborted := p.hard.Err() != nil
		p.vuMu.Unlock()
		if !aborted {
			body(vu)
		}
		vu.close()
	}()
}

// schedule is the open-loop arrival process: each admission of the rate
// gate goes to an idle VU; the pool grows to MaxVUs; an arrival with no
// free VU is dropped and counted.
func (p *Phase) schedule(ctx context.Context, work chan struct{}, wg *sync.WaitGroup) {
	spawned := p.sc.PreAllocatedVUs
	for {
		pm, err := p.gate.Acquire(ctx)
		if err != nil {
			return
		}
		pm.Release()
		select {
		case work <- struct{}{}:
			continue
		default:
		}
		if spawned < p.sc.MaxVUs {
			spawned++
			p.spawn(wg, func(vu *VU) {
				vu.iteration()
				vu.serve(work)
			})
			continue
		}
		p.meter.Drop()
		_ = p.r.builtin.droppedIterations.addTagged(p.sc.Name, 1, func() map[string]string { return map[string]string{"scenario": p.sc.Name} })
	}
}

// spawnTo grows a concurrency-mode pool to n VUs (never past the ceiling);
// VUs beyond the offer wait at the gate.
func (p *Phase) spawnTo(ctx context.Context, wg *sync.WaitGroup, n int) {
	p.vuMu.Lock()
	defer p.vuMu.Unlock()
	for have := int(p.vus.Load()); have < n && have < int(p.limits.Ceiling); have++ {
		p.spawn(wg, func(vu *VU) { vu.loop(ctx) })
	}
}

// ramp follows a ramping executor's stages: four times a second the gate's
// ceiling becomes the stage's current value. Run as authored, the offer
// follows it; governed, the governor climbs to it on its own, and a ramp
// down that lowers the offer well below the committed one is written on
// the control path, so the governor judges its windows at the offer that
// really ran.
func (p *Phase) ramp(ctx context.Context, start time.Time, ctl *governor.Control, wg *sync.WaitGroup) {
	t := time.NewTicker(rampStep)
	defer t.Stop()
	for {
		c := p.sc.Ceiling(time.Since(start))
		if p.limits.Mode == governor.Concurrency {
			c = math.Max(c, 1)
		} else {
			c = math.Max(c, minRate)
		}
		applied, err := p.gate.SetCeiling(c)
		if err == nil {
			switch {
			case p.fixed:
				applied = p.gate.Apply(c)
				if p.limits.Mode == governor.Concurrency {
					p.spawnTo(ctx, wg, int(applied))
				}
			case ctl != nil:
				if st := p.gov.State(); !st.Pending && applied < 0.9*st.Offer {
					ctl.Set(governor.OriginUser, applied)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

const rampStep = 250 * time.Millisecond

// iterate runs an iteration executor as authored: per-vu-iterations gives
// every VU its own count, shared-iterations shares one count among them.
// The phase ends when every VU is done (done is called) or at maxDuration.
func (p *Phase) iterate(ctx context.Context, wg *sync.WaitGroup, done context.CancelFunc) {
	var left atomic.Int64
	left.Store(int64(p.sc.Iterations))
	var vus sync.WaitGroup
	vus.Add(p.sc.VUs)
	for range p.sc.VUs {
		p.spawn(wg, func(vu *VU) {
			defer vus.Done()
			for n := 0; ; n++ {
				if ctx.Err() != nil {
					return
				}
				if p.sc.Executor == options.PerVUIterations {
					if n >= p.sc.Iterations {
						return
					}
				} else if left.Add(-1) < 0 {
					return
				}
				vu.iteration()
			}
		})
	}
	go func() {
		vus.Wait()
		done()
	}()
}

// Span is when the phase ran; zero times when it never started.
func (p *Phase) Span() (start, end time.Time) {
	if n := p.startNanos.Load(); n != 0 {
		start = time.Unix(0, n)
	}
	if n := p.endNanos.Load(); n != 0 {
		end = time.Unix(0, n)
	}
	return start, end
}
