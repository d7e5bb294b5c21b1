// Package clock is the time source of the governor and the gate.
//
// Time is an input: everything that waits or measures in this module takes a
// Clock, so its tests replace the wall clock with a Fake and run exactly,
// without sleeping. Real() is the wall clock; the zero value of nothing here is
// useful, so callers pass Real() when they have no reason to pass anything else.
package clock

import "time"

// Clock tells the time and makes timers and tickers that follow it.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
	NewTicker(d time.Duration) Ticker
}

// Timer fires once on C after its duration unless stopped first.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did so.
	Stop() bool
}

// Ticker fires on C every period until stopped. Like time.Ticker it drops
// ticks for a slow receiver instead of piling them up.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real returns the wall clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }
