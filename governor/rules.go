package governor

import "math"

// This file is the seed, rule by rule. Everything else in the package is
// bookkeeping around it: which evidence a window holds, when it closes, how a
// decision travels to the gate.

// MemoryClearStreak is how many consecutive clean windows judged at or above
// the remembered congestion point (last-bad) clear the memory and restore the
// multiplicative climb. Additive probing goes on through the streak, so
// clearing means the target stayed clean across a rising run of offers, not
// one lucky window.
const MemoryClearStreak = 3

// The seed's constants, named so the rules below read like the note.
const (
	backoffMin     = 0.25 // total failure collapses the offer to a quarter
	backoffMax     = 0.9  // a marginal breach trims a tenth
	safeClimb      = 1.5  // growth per clean window in the proven-safe zone
	safeZone       = 0.75 // the proven-safe zone ends at 75 % of last-bad
	probeFraction  = 0.02 // an additive probe steps 2 % of last-bad...
	probeMinStep   = 1.0  // ...and at least one unit
	slowStartGrow  = 2.0  // doubling while no congestion has been seen
	noEvidenceSpan = 4    // a window still short of attempts at 4 × window holds
)

// Decide is the pure governor step. frac is the window's attempt-failure
// fraction, current the committed offer, lastBad the offer at which
// congestion was last observed (0 while unexplored: offers are never 0, since
// the floor is positive). It returns what the window decided; Decide never
// clears the memory, MemoryClearStep does.
//
//  1. frac > high: back off to current × clamp(1 − frac, 0.25, 0.9), never below
//     the floor, and remember current as last-bad.
//  2. low < frac <= high: the dead band; hold.
//  3. frac <= low (clean):
//     - no memory: slow start, double toward the ceiling;
//     - current < 0.75 × last-bad: safe climb, ×1.5 but not past 0.75 × last-bad;
//     - otherwise: additive probe, + max(1, 2 % of last-bad).
//  4. A rule that would move past the ceiling or floor holds there instead,
//     and says so.
//
// In concurrency mode offers are whole: increases round up, decreases round
// down, and the result is clamped to [floor, ceiling] after rounding.
func Decide(frac, current, lastBad float64, l Limits) Decision {
	d := Decision{From: current, LastBad: lastBad}
	switch {
	case frac > l.High:
		d.LastBad = current
		d.Signal = SignalBackoff
		d.Offer = current * clamp(1-frac, backoffMin, backoffMax)
	case frac > l.Low:
		d.Signal = SignalDeadBand
		d.Offer = current
	case lastBad == 0:
		d.Signal = SignalSlowStart
		d.Offer = slowStartGrow * current
	case current < safeZone*lastBad:
		d.Signal = SignalSafeClimb
		d.Offer = math.Min(safeClimb*current, safeZone*lastBad)
	default:
		d.Signal = SignalProbe
		d.Offer = current + math.Max(probeMinStep, probeFraction*lastBad)
	}
	d.Offer = l.whole(d.Offer, current)
	switch {
	case d.Offer > l.Ceiling:
		d.Offer = l.Ceiling
	case d.Offer < l.Floor:
		d.Offer = l.Floor
	}
	switch {
	case d.Offer > current:
		d.Kind = KindRaise
	case d.Offer < current:
		d.Kind = KindLower
	default:
		d.Kind = KindHold
		// A rule that wanted to move but was stopped by a limit names the limit.
		if d.Signal != SignalDeadBand {
			if d.Signal == SignalBackoff {
				d.Signal = SignalAtFloor
			} else {
				d.Signal = SignalAtCeiling
			}
		}
	}
	return d
}

// MemoryClearStep folds one window into the congestion-memory streak.
// qualifies is true only for a window that was clean and judged at an offer
// at or above last-bad; every other window (a breach, a dead-band or
// no-evidence hold, a clean window still below last-bad) resets the streak.
// When the streak reaches MemoryClearStreak the memory clears: the returned
// streak is 0 and clears is true.
func MemoryClearStep(streak int, qualifies bool) (next int, clears bool) {
	if !qualifies {
		return 0, false
	}
	streak++
	if streak >= MemoryClearStreak {
		return 0, true
	}
	return streak, false
}

// whole rounds an offer in concurrency mode: up when it grows, down when it
// shrinks, so a move is never rounded away and a back-off never rounds up.
func (l Limits) whole(next, current float64) float64 {
	if l.Mode != Concurrency {
		return next
	}
	if next > current {
		return math.Ceil(next)
	}
	return math.Floor(next)
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
