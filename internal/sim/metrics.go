package sim

import (
	"math"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Band is a range of offers, both ends included.
type Band struct{ Lo, Hi float64 }

// Contains reports whether x lies in the band.
func (b Band) Contains(x float64) bool { return x >= b.Lo && x <= b.Hi }

// SettleBand is the band docs/design.md §5 calls settled at capacity c:
// [0.95 c, c / (1 − high)]. At its top a shedding target fails exactly high
// of the attempts, the most the bound allows.
func SettleBand(c, high float64) Band { return Band{0.95 * c, c / (1 - high)} }

// CompareBand is the band the cross-controller report calls settled:
// [0.9 c, c / (1 − high)]. Its bottom is lower than SettleBand's so that
// AIMD's saw-tooth (a ×0.9 cut from just above c / (1 − high) lands at
// 0.947 c) counts as settled too.
func CompareBand(c, high float64) Band { return Band{0.9 * c, c / (1 - high)} }

// Offers returns the offer in force after each decision: Offers()[k] is the
// committed offer once k windows had closed, so [0] is the opening offer and
// the last element is Final.
func (r Result) Offers() []float64 {
	offers := make([]float64, 0, len(r.Windows)+1)
	for _, w := range r.Windows {
		offers = append(offers, w.Offer)
	}
	return append(offers, r.Final)
}

// Since returns the index of the first window that ended after t (measured
// from the start of the run): the window in progress at t, the first one
// whose evidence an event at t could touch. Offers()[Since(t):] are then the
// offers after 0, 1, 2 … decisions since t. It returns len(r.Windows) when no
// window ended after t.
func (r Result) Since(t time.Duration) int {
	at := Epoch.Add(t)
	for i, w := range r.Windows {
		if w.End.After(at) {
			return i
		}
	}
	return len(r.Windows)
}

// EnteredAndStayed returns the fewest decisions n after which every offer in
// offers[n:] lies in b, and false when even the last offer lies outside it.
func EnteredAndStayed(offers []float64, b Band) (n int, ok bool) {
	n = len(offers)
	for n > 0 && b.Contains(offers[n-1]) {
		n--
	}
	return n, n < len(offers)
}

// ReachedAt returns the first index of offers at or above level, and false
// when none is.
func ReachedAt(offers []float64, level float64) (int, bool) {
	for i, x := range offers {
		if x >= level {
			return i, true
		}
	}
	return 0, false
}

// Quality is how well one run found capacity c: the figures of the
// cross-controller report, all measured from the run's windows.
type Quality struct {
	// C is the capacity the run is judged against (the target's capacity
	// after its last change).
	C float64
	// Settled reports whether the offer entered CompareBand(C, high) after
	// the event and stayed there to the end of the run; SettleWindows is how
	// many decisions after the event that took and SettleAt when the settled
	// offer took effect (from the start of the run; never before the event).
	Settled       bool
	SettleWindows int
	SettleAt      time.Duration
	// FailedBefore and AttemptsBefore count the attempts of the windows from
	// the one in progress at the event up to the settle point; for a run
	// that never settled, up to the end of the run.
	FailedBefore, AttemptsBefore uint64
	// Reached90 reports whether the offer reached 0.9 C after the event;
	// To90 is how many decisions after the event that took and To90At when
	// that offer took effect (from the start of the run; never before the
	// event).
	Reached90 bool
	To90      int
	To90At    time.Duration
	// Offer is the time-weighted mean offer over the final stretch of the
	// run, Oscillation the max − min offer there divided by C, Goodput the
	// ok attempts per second and Frac the failure fraction there.
	Offer, Oscillation, Goodput, Frac float64
	// Failed and Attempts count the whole run.
	Failed, Attempts uint64
	// Breach is the first window above high (for the governor: slow start's
	// overshoot), Breached false when there was none. FailedToBreach and
	// AttemptsToBreach count the attempts from the window in progress at the
	// event up to the settle point or through the breach window, whichever
	// is later: a breach judged at an offer already inside the band (a
	// collapse target fails more than high just below c/(1 − high)) still
	// belongs to the cost of getting there.
	Breached                         bool
	Breach                           governor.Window
	FailedToBreach, AttemptsToBreach uint64
}

// Assess measures r against capacity c. event is when the target last
// changed (0 for a target that never does): settling and reaching 90 % of c
// count decisions from the window in progress at event. stretch is the
// final fraction of the run (by time) the steady figures are taken over.
func Assess(r Result, c, high float64, event time.Duration, stretch float64) Quality {
	q := Quality{C: c, Failed: r.Failed, Attempts: r.OK + r.Failed}
	i0 := r.Since(event)
	offers := r.Offers()[i0:]
	end := len(r.Windows)
	if n, ok := EnteredAndStayed(offers, CompareBand(c, high)); ok {
		q.Settled, q.SettleWindows = true, n
		q.SettleAt = max(event, r.decidedAt(i0+n))
		end = i0 + n
	}
	q.FailedBefore, q.AttemptsBefore = count(r.Windows[i0:end])
	for i, w := range r.Windows {
		if governor.Saturated(w, high) {
			q.Breached, q.Breach = true, w
			q.FailedToBreach, q.AttemptsToBreach = count(r.Windows[min(i0, i):max(end, i+1)])
			break
		}
	}
	if n, ok := ReachedAt(offers, 0.9*c); ok {
		q.Reached90, q.To90, q.To90At = true, n, max(event, r.decidedAt(i0+n))
	}
	from := Epoch.Add(time.Duration(float64(r.Elapsed) * (1 - stretch)))
	var secs, weighted, ok, all float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range r.Windows {
		if w.Start.Before(from) {
			continue
		}
		d := w.End.Sub(w.Start).Seconds()
		secs += d
		weighted += w.Offer * d
		ok += float64(w.OK)
		all += float64(w.OK + w.Failed)
		lo, hi = math.Min(lo, w.Offer), math.Max(hi, w.Offer)
	}
	if secs > 0 {
		q.Offer, q.Goodput, q.Oscillation = weighted/secs, ok/secs, (hi-lo)/c
	}
	if all > 0 {
		q.Frac = 1 - ok/all
	}
	return q
}

// count sums the failed and all resolved attempts of ws.
func count(ws []governor.Window) (failed, attempts uint64) {
	for _, w := range ws {
		failed += w.Failed
		attempts += w.OK + w.Failed
	}
	return failed, attempts
}

// decidedAt is the simulated time (from the start of the run) at which the
// offer after the k-th decision took effect: the end of window k−1, or 0 for
// the opening offer.
func (r Result) decidedAt(k int) time.Duration {
	if k == 0 || len(r.Windows) == 0 {
		return 0
	}
	return r.Windows[k-1].End.Sub(Epoch)
}
