package clock

import "time"

// Resetter is implemented by the Timers of Real and Fake. Reset re-arms the
// timer to fire d after the clock's current time, whether it is pending, has
// fired or was stopped, and reports whether it was pending. A tick left unread
// from before the Reset is discarded, as with time.Timer since Go 1.23, so a
// receive after Reset sees only the new firing.
//
// It is a separate interface so that Timer stays as it is: a caller that
// waits often (the gate's head waiter) asserts it to reuse one timer instead
// of allocating a new one per wait, and falls back to NewTimer otherwise.
type Resetter interface {
	Reset(d time.Duration) bool
}

// Reset re-arms the wall-clock timer.
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

// Reset re-arms the fake timer to fire at the fake Now()+d; d <= 0 fires it at
// once, as NewTimer does.
func (t fakeTimer) Reset(d time.Duration) bool { return t.w.clock.reset(t.w, d) }

func (f *Fake) reset(w *fakeWaiter, d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	wasActive := f.stopLocked(w)
	select {
	case <-w.c: // discard a tick nobody read before the Reset
	default:
	}
	f.armLocked(w, d)
	return wasActive
}

// armLocked sets the stopped timer w to fire at Now()+d, at once for d <= 0;
// f.mu is held and w.c is empty.
func (f *Fake) armLocked(w *fakeWaiter, d time.Duration) {
	w.when = f.now.Add(d)
	if d <= 0 {
		w.c <- f.now
		return
	}
	w.active = true
	f.waiters = append(f.waiters, w)
}

// remove drops w from the pending list; f.mu is held.
func (f *Fake) remove(w *fakeWaiter) {
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			return
		}
	}
}
