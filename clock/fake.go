package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to. Timers and tickers made from
// it fire during Advance, in time order, each on a channel with a buffer of
// one (a tick nobody reads is dropped, as with time.Ticker). It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeWaiter
}

// NewFake returns a Fake clock reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

type fakeWaiter struct {
	clock  *Fake
	when   time.Time
	period time.Duration // 0 for a timer
	c      chan time.Time
	active bool
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires once the fake time reaches Now()+d.
// A timer with d <= 0 fires at once.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{clock: f, c: make(chan time.Time, 1)}
	f.armLocked(w, d)
	return fakeTimer{w}
}

// NewTicker returns a ticker that fires every d of fake time. It panics for
// d <= 0, as time.NewTicker does.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{clock: f, when: f.now.Add(d), period: d, c: make(chan time.Time, 1), active: true}
	f.waiters = append(f.waiters, w)
	return fakeTicker{w}
}

// Advance moves the fake time forward by d, firing every timer and ticker
// whose time comes on the way, in order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].when.Before(f.waiters[j].when) })
		if len(f.waiters) == 0 || f.waiters[0].when.After(end) {
			break
		}
		w := f.waiters[0]
		f.now = w.when
		select {
		case w.c <- w.when:
		default: // receiver is behind: drop the tick, like time.Ticker
		}
		if w.period > 0 {
			w.when = w.when.Add(w.period)
		} else {
			w.active = false
			f.waiters = f.waiters[1:]
		}
	}
	f.now = end
}

// Waiters reports how many timers and tickers are pending. Tests use it to
// know that a goroutine has started waiting before they Advance.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

func (f *Fake) stop(w *fakeWaiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopLocked(w)
}

// stopLocked takes w off the pending list and reports whether it was there;
// f.mu is held.
func (f *Fake) stopLocked(w *fakeWaiter) bool {
	if !w.active {
		return false
	}
	w.active = false
	f.remove(w)
	return true
}

type fakeTimer struct{ w *fakeWaiter }

func (t fakeTimer) C() <-chan time.Time { return t.w.c }
func (t fakeTimer) Stop() bool          { return t.w.clock.stop(t.w) }

type fakeTicker struct{ w *fakeWaiter }

func (t fakeTicker) C() <-chan time.Time { return t.w.c }
func (t fakeTicker) Stop()               { t.w.clock.stop(t.w) }
