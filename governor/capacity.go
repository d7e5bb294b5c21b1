package governor

import (
	"math"
	"time"
)

// Estimate is the capacity a phase measured at its failure bound: the
// throttled steady state. It rests only on settled windows; a window whose
// failure fraction was above high is a saturation artifact and never counts.
type Estimate struct {
	// Windows is how many settled windows the estimate rests on; 0 means the
	// phase never settled and the other figures are zero.
	Windows int
	// Offer is the mean committed offer over the settled windows.
	Offer float64
	// Goodput is ok attempts per second over the settled windows, and
	// Throughput all resolved attempts per second over them.
	Goodput, Throughput float64
	// Frac is the attempt-failure fraction over the settled windows.
	Frac float64
	// AtCeiling is true when the settled windows held at the ceiling: the
	// target took everything asked of it, so its capacity is at least the
	// ceiling, not at it.
	AtCeiling bool
	// Saturated counts windows above high: excluded, and flagged in reports.
	Saturated int
}

// Settled reports whether a window can count toward the capacity estimate: it
// held at or below the failure bound and was judged near the congestion point
// (an additive probe, a dead-band or latency-knee hold, a hold at the ceiling
// or the window that cleared the memory). Slow-start and safe-climb windows are still
// searching, below the level the target was seen to fail at, so they do not
// measure capacity. It is judged window by window, as they arrive; Capacity,
// which sees the whole phase, also requires a window's offer to lie near the
// level the phase settled at.
func Settled(w Window, high float64) bool {
	if w.Frac > high || w.OK+w.Failed == 0 {
		return false
	}
	switch w.Decision.Signal {
	case SignalProbe, SignalDeadBand, SignalLatency, SignalAtCeiling, SignalMemoryCleared:
		return true
	}
	return false
}

// Saturated reports whether a window is a saturation artifact: it resolved
// attempts and its failure fraction was above high. Reports flag such
// windows; Capacity counts them and never rests on them.
// An outage window (the target unreachable) is neither: it says nothing
// about capacity.
func Saturated(w Window, high float64) bool {
	return w.Frac > high && w.OK+w.Failed > 0 && w.Decision.Signal != SignalOutage
}

// steadySpan is how far, as a fraction of the offer, a window may lie from
// the level a phase settled at and still belong to that steady state. The
// steady state spans a back-off's trim (at most 10 %) and the dead band above
// capacity (5 % at the default high), so ±15 % holds all of it, while a
// capacity that doubled or halved, or a hold at offer 1 on the way up, lies
// far outside.
const steadySpan = 0.15

// Capacity estimates the capacity at the failure bound high from a phase's
// closed windows: the throttled steady state, over the settled windows whose
// offer lies within ±15 % of the last settled window's offer, the level the
// phase settled at. Settled windows at other levels are not this steady
// state: a dead-band hold at offer 1 on one unlucky failure of 20 (which
// pulled the estimate far below capacity on a target with background
// failures), the probes at the floor after a target died, or a capacity the
// target has since outgrown or fallen below.
func Capacity(windows []Window, high float64) Estimate {
	var e Estimate
	for _, w := range windows {
		if Saturated(w, high) {
			e.Saturated++
		}
	}
	var ok, failed uint64
	var span time.Duration
	var offers float64
	ceiling := true
	for _, i := range Steady(windows, high) {
		w := windows[i]
		e.Windows++
		ok += w.OK
		failed += w.Failed
		span += w.End.Sub(w.Start)
		offers += w.Offer
		if w.Decision.Signal != SignalAtCeiling {
			ceiling = false
		}
	}
	if e.Windows == 0 {
		return e
	}
	e.Offer = offers / float64(e.Windows)
	if secs := span.Seconds(); secs > 0 {
		e.Goodput = float64(ok) / secs
		e.Throughput = float64(ok+failed) / secs
	}
	if ok+failed > 0 {
		e.Frac = float64(failed) / float64(ok+failed)
	}
	e.AtCeiling = ceiling
	return e
}

// Steady returns the indices, in order, of the windows Capacity rests on:
// the settled windows whose offer lies within ±15 % of the last settled
// window's offer. Reports use it to take latency and timelines from exactly
// the windows the capacity figure came from.
func Steady(windows []Window, high float64) []int {
	level := 0.0
	for _, w := range windows {
		if Settled(w, high) {
			level = w.Offer
		}
	}
	var idx []int
	for i, w := range windows {
		if Settled(w, high) && math.Abs(w.Offer-level) <= steadySpan*level {
			idx = append(idx, i)
		}
	}
	return idx
}
