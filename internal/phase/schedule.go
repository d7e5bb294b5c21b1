package phase

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// spawn starts one worker on its own goroutine: it is made there (a script
// VU runs its init code), then body runs it; it is closed when body
// returns. A worker made after the phase aborted is closed unused. exit,
// if set, runs when the goroutine ends, whether the worker was made or not.
// A body that returns true retired its worker (pool.go): once closed, it
// leaves the pool and its id is free again.
func (p *Phase) spawn(body func(Worker) (retired bool), exit ...func()) {
	for n := p.workers.Add(1); ; {
		if old := p.peak.Load(); n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	id := p.takeID()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for _, f := range exit {
			defer f()
		}
		w, err := p.cfg.NewWorker(id)
		if err != nil {
			if p.cfg.WorkerFailed != nil {
				p.cfg.WorkerFailed(err)
			}
			return
		}
		if p.hard.Err() == nil && body(w) {
			w.Close()
			p.retired(id)
			return
		}
		w.Close()
	}()
}

// iteration runs one iteration on w, counting it in flight and, in open
// loop, its schedule lag. A stopping phase starts none.
func (p *Phase) iteration(w Worker, due time.Time) {
	select {
	case <-p.stop:
		// An arrival handed out just before the stop is never started:
		// it is counted as dropped, so every arrival is accounted for.
		if !due.IsZero() {
			p.drop()
		}
		return
	default:
	}
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	if !due.IsZero() {
		p.cfg.Counters.Lag(p.clk.Now().Sub(due))
	}
	w.Iterate(due)
}

// serve is an open-loop worker: it runs the arrival it was started for
// (none when first is zero: a pre-allocated worker), then every arrival
// handed to it until the work channel closes, or until it takes a
// retirement while idle (pool.go), when it returns true.
func (p *Phase) serve(w Worker, first time.Time) (retired bool) {
	if !first.IsZero() {
		p.iteration(w, first)
	}
	for {
		select {
		case due, ok := <-p.work:
			if !ok {
				return false
			}
			p.iteration(w, due)
		case <-p.pool.quit:
			return true
		}
	}
}

// schedule is the open-loop arrival process: it takes each admission from
// the rate gate and hands its due instant to an idle worker, starting a new
// worker while the pool is below MaxWorkers and counting the arrival as
// dropped when it is not.
func (p *Phase) schedule(ctx context.Context) {
	for {
		due, ok := p.nextArrival(ctx)
		if !ok {
			return
		}
		select {
		case p.work <- due:
			continue
		default:
		}
		if int(p.workers.Load()) < p.cfg.MaxWorkers {
			p.spawnServing(due)
			continue
		}
		p.drop()
	}
}

// nextArrival waits for the rate gate's next admission that is an
// arrival (an outage's held-back admissions are not: probe.go), counts
// it, and returns its due instant; false when ctx ended.
func (p *Phase) nextArrival(ctx context.Context) (time.Time, bool) {
	for {
		pm, err := p.gate.Acquire(ctx)
		if err != nil {
			return time.Time{}, false
		}
		due := pm.Due()
		pm.Release()
		if ok, _ := p.admit(); ok {
			p.arrivals.Add(1)
			return due, true
		}
	}
}

// drop counts an arrival no worker started.
func (p *Phase) drop() {
	p.cfg.Counters.Drop()
	if p.cfg.Dropped != nil {
		p.cfg.Dropped()
	}
}

// spawnServing starts an open-loop worker for the arrival due; an arrival
// whose worker could not be made (or was made after the abort) is dropped.
func (p *Phase) spawnServing(due time.Time) {
	served := false
	p.spawn(func(w Worker) bool { served = true; return p.serve(w, due) }, func() {
		if !served {
			p.drop()
		}
	})
}

// spawnTo grows the closed-loop pool to n workers (never past the
// ceiling). Workers beyond the offer simply wait at the gate. With stagger
// the new workers start their first iteration spread evenly over one
// closed-loop cycle (see staggerSpan) instead of all at once.
func (p *Phase) spawnTo(ctx context.Context, n int, stagger bool) {
	p.workersMu.Lock()
	defer p.workersMu.Unlock()
	var span time.Duration
	if stagger {
		span = p.staggerSpan()
	}
	if p.loops() {
		p.growLoops(n, span)
		return
	}
	add := min(n, p.cfg.maxWorkers()) - int(p.workers.Load())
	for i := range max(add, 0) {
		delay := span * time.Duration(i) / time.Duration(add)
		p.spawn(func(w Worker) bool { p.loop(ctx, w, delay); return false })
	}
}

// staggerSpan is the span the governor's newly added closed-loop workers
// start over: the mean iteration so far (response plus think time: one
// cycle of the loop), but at most half the shortest window the governor
// judges a new offer on (governor.Shortest: two ticks by default, so a
// second). Workers that start at one instant stay in step when each
// iteration sleeps the same think time, so a target that meters bursts
// (nginx's limit_req) refuses the cohorts of a load it would serve spread
// out; started over a cycle, they make the new offer's steady rate from
// the start, as VUs a ramp added one by one would. The cap keeps the
// evidence whole: every added worker has run before the window at the new
// offer can close. 0 before any iteration ended (the phase's first
// workers).
func (p *Phase) staggerSpan() time.Duration {
	n := p.iterCount.Load()
	if n == 0 {
		return 0
	}
	span := time.Duration(p.iterNanos.Load() / n)
	if p.gov != nil {
		span = min(span, p.gov.Shortest()/2)
	}
	return min(span, p.cfg.Limits.Window)
}

// loop is a closed-loop worker: after delay (a staggered start), back to
// back iterations, each holding a permit of the concurrency gate, until
// the phase stops. Each iteration's length feeds staggerSpan.
func (p *Phase) loop(ctx context.Context, w Worker, delay time.Duration) {
	// Each worker's goroutine runs this loop under its whole iteration (a
	// script VU's sleep included), so its frame is kept small: the rarely
	// taken paths, with their selects and timers, are functions of their
	// own (docs/performance.md, "A sleeping VU's stack").
	if delay > 0 && !p.startAfter(ctx, delay) {
		return
	}
	var m *member
	if p.rd != nil {
		m = p.rd.join(w)
		defer p.rd.leave(m)
	}
	for {
		if !p.waitProbe(ctx) { // an outage lets probes only (probe.go)
			return
		}
		pm, err := p.gate.Acquire(ctx)
		if err != nil {
			return
		}
		// A closed loop has no schedule: the iteration starts when it
		// runs (zero due), and no schedule lag is counted.
		if m != nil {
			run, ok := p.rampBegin(ctx, m, pm)
			if !ok {
				return
			}
			if !run {
				continue
			}
		}
		began := p.clk.Now()
		// p.iteration, by hand: one frame less under every iteration.
		// (No defer for the count: nothing recovers a worker's panic, so
		// the process ends with it.)
		if !closed(p.stop) {
			p.inflight.Add(1)
			w.Iterate(time.Time{})
			p.inflight.Add(-1)
		}
		p.iterNanos.Add(int64(p.clk.Now().Sub(began)))
		p.iterCount.Add(1)
		if m != nil {
			p.rd.end(m)
		}
		pm.Release()
	}
}

// startAfter waits out a worker's staggered start: false if ctx ended or
// the phase stopped first.
//
//go:noinline
func (p *Phase) startAfter(ctx context.Context, delay time.Duration) bool {
	t := p.clk.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-p.stop:
		return false
	case <-t.C():
		return true
	}
}

// rampBegin begins member m's iteration under a ramp-down, pm in hand:
// run is false when the authored count is 0 (pm released, and the loop
// goes round once it rises); ok false when ctx ended meanwhile.
//
//go:noinline
func (p *Phase) rampBegin(ctx context.Context, m *member, pm gate.Permit) (run, ok bool) {
	if idle := p.rd.idle(); idle != nil {
		// The authored count is 0: no iteration starts until it rises.
		pm.Release()
		select {
		case <-idle:
			return false, true
		case <-ctx.Done():
			return false, false
		}
	}
	p.rd.begin(m)
	return true, true
}

// ramp follows an authored schedule: every RampStep the gate's ceiling
// becomes the authored value at that moment. Not governed, the offer
// follows it. Governed, the governor climbs to it on its own and never
// past it; a ramp down that lowers the offer well below the committed one
// is written on the control path, so the governor judges its windows at
// the offer that really ran.
func (p *Phase) ramp(ctx context.Context, start time.Time, ctl *governor.Control) {
	t := p.clk.NewTicker(RampStep)
	defer t.Stop()
	for {
		c := p.authored(p.rampAt(p.clk.Now().Sub(start)))
		applied, err := p.gate.SetCeiling(c)
		if err == nil {
			switch {
			case !p.cfg.Governed:
				applied = p.gate.Apply(c)
				if p.cfg.Limits.Mode == governor.Concurrency {
					p.spawnTo(ctx, int(applied), false)
				}
			case ctl != nil:
				if st := p.gov.State(); !st.Pending && applied < 0.9*st.Offer {
					ctl.Set(governor.OriginUser, applied)
				}
			}
			// Published last, so a reader that sees this ceiling also
			// sees the offer the ramp applied for it.
			p.setCeilingNow(c)
		}
		if p.rd != nil {
			now := p.clk.Now()
			p.rd.trim(p.authoredCount(now.Sub(start)), now)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// iterate runs a fixed amount of iterations as authored: each worker its
// own count (PerWorker) or all of them one shared count. done is called
// when every worker is done.
func (p *Phase) iterate(ctx context.Context, done context.CancelFunc) {
	it := p.cfg.Iterations
	var left atomic.Int64
	left.Store(int64(it.Count))
	var all sync.WaitGroup
	all.Add(it.Workers)
	p.workersMu.Lock()
	defer p.workersMu.Unlock()
	for range it.Workers {
		p.spawn(func(w Worker) bool {
			for n := 0; ctx.Err() == nil; n++ {
				if it.PerWorker {
					if n >= it.Count {
						return false
					}
				} else if left.Add(-1) < 0 {
					return false
				}
				p.iteration(w, time.Time{})
			}
			return false
		}, all.Done)
	}
	go func() {
		all.Wait()
		done()
	}()
}
