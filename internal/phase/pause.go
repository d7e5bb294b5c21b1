package phase

import (
	"sync/atomic"
	"time"
)

// Pause is a worker's wait on one reusable timer: a retry's backoff, a
// script's sleep. The zero value is ready; it belongs to one goroutine,
// but for Wake, which any goroutine may call.
type Pause struct{ t atomic.Pointer[time.Timer] }

// timer is the pause's timer, set to fire after d.
func (p *Pause) timer(d time.Duration) *time.Timer {
	t := p.t.Load()
	if t == nil {
		t = time.NewTimer(d)
		p.t.Store(t)
	} else {
		t.Reset(d)
	}
	return t
}

// Wait waits d, or until stop or abort closes (a nil channel never does),
// and reports whether the whole of d passed.
func (p *Pause) Wait(d time.Duration, stop, abort <-chan struct{}) bool {
	t := p.timer(d)
	select {
	case <-t.C:
		return true
	case <-stop:
	case <-abort:
	}
	t.Stop()
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

// SleepCoalesced is WaitCoalesced with no stop, for a goroutine whose
// stack must stay shallow while it waits: a script VU asleep in sleep(),
// as most of them are most of the time. It parks on the timer's channel
// alone, a receive (the runtime's chanrecv1 and chanrecv, 160 bytes of
// stack) where a select of three channels is selectgo (304 bytes) and
// its cases in the caller's frame. So abort closing does not wake it by
// itself: whoever closes abort while the worker may be asleep must then
// call Wake. A wake with abort still open ends nothing (the wait goes on
// to its end): the wait is never short but for abort.
func (p *Pause) SleepCoalesced(d time.Duration, abort <-chan struct{}) bool {
	now := time.Now()
	d = Coalesce(now, d)
	end := now.Add(d)
	t := p.timer(d)
	for {
		if closed(abort) {
			t.Stop()
			return false
		}
		<-t.C
		// The timer was set after now, so having fired on its own it
		// is at or past end; before it, Wake fired it.
		rest := time.Until(end)
		if rest <= 0 {
			return true
		}
		t.Reset(rest)
	}
}

// Wake ends a SleepCoalesced under way whose abort has closed (or will
// find it closed when it begins). Safe from any goroutine; a pause that
// is not asleep is unaffected (its next sleep resets the timer, and a
// Reset drops a value the timer's channel held).
func (p *Pause) Wake() {
	if t := p.t.Load(); t != nil {
		t.Reset(0)
	}
}

// closed reports whether c is closed (a nil c never is) without blocking.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Stop releases the timer.
func (p *Pause) Stop() {
	if t := p.t.Load(); t != nil {
		t.Stop()
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
