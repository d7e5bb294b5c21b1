package script

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/internal/script/options"
)

// VUs are made before setup(), as k6 makes them. k6's test lifecycle
// (Using k6 > Test lifecycle) runs "1. init ... Once per VU", then "2.
// Setup ... Once", then "3. VU code"; its arrival-rate executors'
// preAllocatedVUs is the "Number of VUs to pre-allocate before test start",
// maxVUs beyond it being made as the test needs them. So MakeVUs runs
// every VU's init context that a scenario starts with before setup() and
// before any scenario's clock starts: a constant-vus scenario of 100 000
// VUs then runs its whole duration with all of them, and setup() sees
// every VU's init done. The phase runtime's worker factory (Phase.newWorker)
// hands these out in the order of their ids before it makes any VU of its
// own (an arrival-rate pool growing past preAllocatedVUs, a ramp's VUs
// beyond those planned: none, as the plan is the stages' most).

// plannedVUs is how many VUs sc starts with, as k6 plans them: the VU
// executors' vus, ramping-vus the most its start and stages reach (the
// governor's ceiling, the most it may run), arrival-rate preAllocatedVUs
// (the rest up to maxVUs stays lazy, as in k6).
func plannedVUs(sc options.Scenario) int {
	switch sc.Executor {
	case options.ConstantArrivalRate, options.RampingArrivalRate:
		if sc.MaxVUs > 0 {
			return min(sc.PreAllocatedVUs, sc.MaxVUs)
		}
		return sc.PreAllocatedVUs
	case options.RampingVUs:
		return int(sc.MaxCeiling()) // as phase.Config.maxWorkers truncates it
	}
	return sc.VUs
}

// premade are a phase's VUs made before the run; guarded by Phase.vuMu.
type premade struct {
	vus []*VU
	// lost[i] is why vus[i] is nil: a Go panic in its init context
	// (throttle's bug, logged and counted): that VU is lost, as one made
	// by the phase would be, and the others run.
	lost []error
	next int // vus[next:] are not handed out yet
}

// takePremade hands out the phase's next pre-made VU, or the panic that
// lost it; neither when none is left.
func (p *Phase) takePremade() (vu *VU, lost error) {
	p.vuMu.Lock()
	defer p.vuMu.Unlock()
	if p.pre.next >= len(p.pre.vus) {
		return nil, nil
	}
	i := p.pre.next
	vu, lost = p.pre.vus[i], p.pre.lost[i]
	p.pre.vus[i] = nil
	p.pre.next++
	return vu, lost
}

// closePremade closes the phase's pre-made VUs never handed out (a run
// ended before the phase started, or one that failed making them).
func (p *Phase) closePremade() {
	p.vuMu.Lock()
	left := p.pre.vus[min(p.pre.next, len(p.pre.vus)):]
	p.pre.next = len(p.pre.vus)
	p.vuMu.Unlock()
	for i, vu := range left {
		if vu != nil {
			vu.close()
			left[i] = nil
		}
	}
}

// MakeVUs makes every scenario's planned VUs (plannedVUs) and runs their
// init contexts, on the process's init slots, with the run's init timeout
// and the GC held off over the bulk (initgc.go). It runs once: Run calls
// it before setup(); an agent calls it before it tells its controller it
// is ready, so that the controller starts agents whose VUs are made. ctx
// ending stops it with ErrInterrupted (k6's 105, as a signal during the
// script's first init context); a VU's init context throwing ends it with
// that VU's InitError (107), the other VUs' inits stopped. On an error no
// VU made is kept.
func (r *Runner) MakeVUs(ctx context.Context) error {
	r.premadeOnce.Do(func() {
		r.premadeErr = r.makeVUs(ctx)
		if r.premadeErr != nil {
			r.closePremade()
		}
	})
	return r.premadeErr
}

// sayMaking is how many VUs to make before setup() for the wait to be
// announced (and its length said): a few hundred take well under a second.
const sayMaking = 1000

// closePremade closes every phase's pre-made VUs not handed out.
func (r *Runner) closePremade() {
	for _, p := range r.phases {
		p.closePremade()
	}
}

func (r *Runner) makeVUs(ctx context.Context) error {
	// Every VU's place: its phase and its index there, in id order.
	type place struct {
		p *Phase
		i int
	}
	var places []place
	for _, p := range r.phases {
		n := plannedVUs(p.sc)
		p.pre.vus, p.pre.lost = make([]*VU, n), make([]error, n)
		for i := range n {
			places = append(places, place{p, i})
		}
	}
	total := len(places)
	if total == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if total >= sayMaking && r.cfg.Logger != nil {
		// Thousands of init contexts take seconds; say what the wait is.
		began := time.Now()
		r.cfg.Logger.Info(fmt.Sprintf("making %d VUs before setup() (k6 runs every VU's init context before the test starts)", total))
		defer func() {
			if ctx.Err() == nil {
				r.cfg.Logger.Info(fmt.Sprintf("%d VUs made in %.1fs", total, time.Since(began).Seconds()))
			}
		}()
	}
	// Ids 1..N in plan order, reserved at once: a VU made by a phase
	// later takes the next one.
	base := r.vuIDs.Add(int64(total)) - int64(total)
	// stop closes on ctx's end or a VU's failure, never on success: a
	// VU's init watch may still see it after its init ended, and would
	// interrupt the VU's first iteration.
	stop, finished := make(chan struct{}), make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			halt()
		case <-finished:
		}
	}()
	var errMu sync.Mutex
	var first, stopped error // the first failure; the first init a signal stopped (naming its line)
	var next atomic.Int64
	initGC.enterN(total, r.cfg.MemoryBound, r.cfg.MemoryShare)
	var wg sync.WaitGroup
	for range min(cap(initSlots), total) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= total {
					return
				}
				err := r.makePremade(places[k].p, places[k].i, base+int64(k)+1, stop)
				initGC.leave()
				if errors.Is(err, ErrInterrupted) && err != ErrInterrupted {
					errMu.Lock()
					if stopped == nil {
						stopped = err
					}
					errMu.Unlock()
				}
				if err == nil || errors.Is(err, ErrInterrupted) || errors.As(err, new(*HostPanic)) {
					continue // made, stopped by the halt, or lost to a panic
				}
				errMu.Lock()
				if first == nil {
					first = err
				}
				errMu.Unlock()
				halt()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if ctx.Err() != nil {
		if stopped != nil {
			return stopped
		}
		return ErrInterrupted
	}
	initGC.settle()
	return nil
}

// makePremade makes phase p's i-th planned VU with id on an init slot;
// stop closing skips or interrupts it (ErrInterrupted).
func (r *Runner) makePremade(p *Phase, i int, id int64, stop <-chan struct{}) error {
	select {
	case <-stop:
		return ErrInterrupted
	default:
	}
	select {
	case initSlots <- struct{}{}:
	case <-stop:
		return ErrInterrupted
	}
	vu, err := r.makeVU(p, id, stop)
	<-initSlots
	if err != nil {
		if errors.As(err, new(*HostPanic)) {
			p.vuMu.Lock()
			p.pre.lost[i] = err
			p.vuMu.Unlock()
		}
		return err
	}
	p.vuMu.Lock()
	p.pre.vus[i] = vu
	p.vuMu.Unlock()
	p.vus.Add(1)
	return nil
}
