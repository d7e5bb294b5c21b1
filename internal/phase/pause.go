package phase

import "time"

// Pause is a worker's wait on one reusable timer: a retry's backoff, a
// script's sleep. The zero value is ready; it belongs to one goroutine.
type Pause struct{ t *time.Timer }

// Wait waits d, or until stop or abort closes (a nil channel never does),
// and reports whether the whole of d passed.
func (p *Pause) Wait(d time.Duration, stop, abort <-chan struct{}) bool {
	if p.t == nil {
		p.t = time.NewTimer(d)
	} else {
		p.t.Reset(d)
	}
	select {
	case <-p.t.C:
		return true
	case <-stop:
	case <-abort:
	}
	p.t.Stop()
	return false
}

// WaitCoalesced is Wait for a wait that may end a little late, never
// early: a script's sleep (k6's sleep(d) waits at least d). Its end is
// rounded up to Coalesce's grid, so that many workers' long waits that
// end close together end at one instant: the runtime then fires their
// timers in one pass and the process wakes once for them all, instead of
// once per worker (each wake of an idle Go process costs a thread wake-up,
// and the runtime's sysmon spins for a millisecond after each).
func (p *Pause) WaitCoalesced(d time.Duration, stop, abort <-chan struct{}) bool {
	return p.Wait(Coalesce(time.Now(), d), stop, abort)
}

// Stop releases the timer.
func (p *Pause) Stop() {
	if p.t != nil {
		p.t.Stop()
	}
}

// coalesceMax is the largest grid step: the most a coalesced wait adds.
const coalesceMax = 16 * time.Millisecond

// Coalesce returns the wait that ends at the first instant of a grid at
// or after now + d: at least d, and less than d plus the grid's step,
// which is the largest power-of-two number of milliseconds at most d/1024
// (at most 16 ms; 0.1 % of the wait at most). Waits under about a second
// have no grid and are returned unchanged. The grid is the wall clock's
// (Unix time), the same for every worker, so waits with different steps
// still meet at the coarser step's instants.
func Coalesce(now time.Time, d time.Duration) time.Duration {
	step := time.Millisecond
	if d/1024 < step {
		return d
	}
	for step*2 <= d/1024 && step*2 <= coalesceMax {
		step *= 2
	}
	end := now.UnixNano() + int64(d)
	if r := end % int64(step); r != 0 {
		end += int64(step) - r
	}
	return time.Duration(end - now.UnixNano())
}
