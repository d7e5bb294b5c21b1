// The wait queue: Acquire calls that found no permit wait here, in order
// of arrival. In rate mode only the head waits on a timer (for its slot);
// in concurrency mode a release grants the head. Waiters are reused.

package gate

import (
	"context"
	"time"

	"github.com/throttlekit/throttle/clock"
)

// waiter is one blocked Acquire. Fields other than ready and the timer are
// guarded by the gate's mu.
type waiter struct {
	next, prev *waiter
	ready      chan struct{} // capacity 1: granted, or told to look again
	granted    bool
	permit     Permit
	timer      clock.Timer // rate mode head only; reused when it is a clock.Resetter
}

// enqueueLocked appends a waiter for the caller.
func (g *Gate) enqueueLocked() *waiter {
	var w *waiter
	if n := len(g.spare); n > 0 {
		w = g.spare[n-1]
		g.spare = g.spare[:n-1]
	} else {
		w = &waiter{ready: make(chan struct{}, 1)}
	}
	w.prev, w.next = g.tail, nil
	if g.tail != nil {
		g.tail.next = w
	} else {
		g.head = w
	}
	g.tail = w
	g.waiting++
	return w
}

// removeLocked takes w out of the queue.
func (g *Gate) removeLocked(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		g.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		g.tail = w.prev
	}
	w.next, w.prev = nil, nil
	g.waiting--
}

// grantLocked admits waiters from the head of the queue for as long as the
// gate allows at now, and wakes each one it admits. If the head then is a
// waiter that was not the head before, or nudge is set, it is woken too, so
// that in rate mode it arms its timer for the new due time.
func (g *Gate) grantLocked(now int64, nudge bool) {
	old := g.head
	for w := g.head; w != nil; w = g.head {
		p, ok := g.admitLocked(now)
		if !ok {
			break
		}
		g.removeLocked(w)
		w.granted, w.permit = true, p
		wake(w)
	}
	if g.mode == Rate && g.head != nil && (nudge || g.head != old) {
		wake(g.head)
	}
}

func wake(w *waiter) {
	select {
	case w.ready <- struct{}{}:
	default: // already awake-pending; it will look at the gate anyway
	}
}

// waitLocked blocks the queued waiter w until it is granted or ctx ends. It
// is entered with g.mu held (the enqueue and the first check share one
// critical section) and returns with it released. Only the
// head of the queue waits on a timer, and only in rate mode: it is the next
// to be admitted, and when it is, the gate admits everyone behind it whose
// turn has come as well and wakes the new head.
func (g *Gate) waitLocked(ctx context.Context, w *waiter) (Permit, error) {
	done := ctx.Done()
	var tick <-chan time.Time
	for {
		if !w.granted && g.mode == Rate && g.head == w && ctx.Err() == nil {
			now := g.now()
			g.grantLocked(now, false)
			if !w.granted {
				tick = nil // past the schedule's end (End): no timer, ctx ends the wait
				if due := g.dueLocked(now); due < g.until {
					tick = g.armLocked(w, time.Duration(due-now))
				}
			}
		}
		if w.granted {
			p := w.permit
			g.retireLocked(w)
			g.mu.Unlock()
			return p, nil
		}
		if err := ctx.Err(); err != nil {
			wasHead := g.head == w
			g.removeLocked(w)
			g.cancelled++
			if wasHead && g.head != nil && g.mode == Rate {
				// The waiter behind may be due now (rate mode), and it
				// must arm the timer w held.
				g.grantLocked(g.now(), true)
			}
			g.retireLocked(w)
			g.mu.Unlock()
			return Permit{}, err
		}
		g.mu.Unlock()
		select {
		case <-w.ready:
		case <-tick:
		case <-done:
		}
		g.mu.Lock()
	}
}

// armLocked sets w's timer to fire after d, reusing it when the clock's
// timers can be reset.
func (g *Gate) armLocked(w *waiter, d time.Duration) <-chan time.Time {
	if w.timer != nil {
		if r, ok := w.timer.(clock.Resetter); ok {
			r.Reset(d)
			return w.timer.C()
		}
		w.timer.Stop()
	}
	w.timer = g.clock.NewTimer(d)
	return w.timer.C()
}

// retireLocked stops w's timer, so none is left running after Acquire
// returns, and keeps w for reuse.
func (g *Gate) retireLocked(w *waiter) {
	if w.timer != nil {
		w.timer.Stop()
		if _, ok := w.timer.(clock.Resetter); !ok {
			w.timer = nil
		}
	}
	select {
	case <-w.ready: // drop a wake-up that came too late to matter
	default:
	}
	w.granted, w.permit = false, Permit{}
	if len(g.spare) < maxSpareWaiters {
		g.spare = append(g.spare, w)
	}
}
