package report

import (
	"fmt"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// The evidence that held the offer at the level a phase settled at
// (CapacityJSON.HeldBy).
const (
	HeldByFailures = "failures" // failed attempts: the target refused or broke
	HeldByUnserved = "unserved" // rate mode: load the target did not serve (dropped, queued)
	HeldByLatency  = "latency"  // latency inflated against the low-load baseline
)

// limitSpan is how far below the level a phase settled at a window's damage
// still speaks for that level: the steady span governor.Capacity uses.
const limitSpan = 0.15

// latencyNoise is the excess over the low-load baseline below which a
// window's latency is a busy host's jitter, not a queue: the governor's own
// floor (it no longer backs off on less; a report of an older run, or of a
// window it judged on more than latency, may still hold one).
const latencyNoise = time.Millisecond

// limit says what held the offer near est's level: the evidence of the
// damaged windows (a fraction above Low: dead-band holds and breaches)
// judged at or above 85 % of the settled offer, failures first, then
// unserved load, then latency. by is "" when no window there was damaged:
// the offer was still climbing, every window up to the highest clean offer
// was clean. weak is true when only latency held it and by less than
// latencyNoise over the baseline in every such window: a fast answer's
// noise, not a queue (issue 28: p50 0.18 → 0.28 ms at 4 VUs backed off, and
// the verdict said "capacity ≈ 6.5" of a target that served 100).
func limit(in Input, est governor.Estimate) (by string, weak bool) {
	l := in.Settings.Limits
	level := (1 - limitSpan) * est.Offer
	weak = true
	for _, w := range in.Windows {
		if w.Decision.Signal == governor.SignalNoEvidence || w.Offer < level || !damaged(w, l.Low) {
			continue
		}
		switch {
		case w.By == "" || w.By == "generator":
			return HeldByFailures, false
		case w.By == "unserved":
			by = HeldByUnserved
		case by == "":
			by = HeldByLatency
		}
		if w.By == HeldByLatency && w.Latency-w.Baseline >= latencyNoise {
			weak = false
		}
	}
	return by, by == HeldByLatency && weak
}

// damaged reports whether a window showed damage: a fraction above low, or
// a decision only damage takes (a dead-band or latency-knee hold, a
// back-off, a back-off stopped at the floor).
func damaged(w governor.Window, low float64) bool {
	switch w.Decision.Signal {
	case governor.SignalDeadBand, governor.SignalLatency, governor.SignalBackoff, governor.SignalAtFloor:
		return true
	}
	return w.Frac > low
}

// climbing reports whether a decision's signal is one of the clean climbs.
func climbing(s governor.Signal) bool {
	switch s {
	case governor.SignalSlowStart, governor.SignalSafeClimb, governor.SignalProbe, governor.SignalMemoryCleared:
		return true
	}
	return false
}

// highestClean is the highest offer a judged window found clean (at or below
// Low), 0 when none was.
func highestClean(in Input) float64 {
	top := 0.0
	for _, w := range in.Windows {
		if w.Decision.Signal != governor.SignalNoEvidence && w.OK+w.Failed > 0 && !damaged(w, in.Settings.Limits.Low) {
			top = max(top, w.Offer)
		}
	}
	return top
}

// noLimit is the verdict of a phase whose settled windows measure no limit:
// the offer was still climbing when the run ended, or only weak latency
// evidence held it. It names the highest offer found clean, and the
// evidence that held the offer when there was any.
func noLimit(in Input, est governor.Estimate, by string) string {
	l := in.Settings.Limits
	top := offer(max(highestClean(in), est.Offer), l.Mode)
	if by == "" {
		return fmt.Sprintf("still climbing: no limit found up to %s (every window there was clean, goodput %s req/s); run longer", top, num(est.Goodput))
	}
	excess := time.Duration(0)
	for _, w := range in.Windows {
		if w.By == HeldByLatency {
			excess = max(excess, w.Latency-w.Baseline)
		}
	}
	return fmt.Sprintf("no limit found up to %s: only latency held the offer, by at most %s over the low-load baseline (a busy host's noise, not a queue) and no failures; run longer",
		top, dur(excess))
}
