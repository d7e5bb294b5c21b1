package governor

import (
	"math"
	"time"
)

// WithQuickClimb switches the quick climb on or off (default on). With it
// on, a window that would climb multiplicatively (slow start, safe climb)
// closes as soon as its evidence is clean and sufficient for that climb,
// instead of waiting for the full Limits.Window and Limits.MinAttempts; a
// window short of MinAttempts whose damage is a breach beyond doubt closes
// on it (in concurrency mode also inside the window, see fewBreach); and no
// evidence is discarded after a raise. See the package doc, "Evidence at low attempt
// rates". Off gives the seed's cadence: every window lasts Window and holds
// MinAttempts attempts. Unless it is given, the quick climb follows
// WithEarlyBreach: WithEarlyBreach(false) alone is the seed's exact cadence.
func WithQuickClimb(on bool) Option { return func(g *Governor) { g.quick, g.quickSet = on, true } }

// quickSpan is how long a window lasts at least before the quick climb may
// close it: one tick in rate mode, two in concurrency mode (but never less
// than a fifth of the window a tick, see quickWindows, nor more than the
// window). Damage that takes a moment to show (a queue building, answers
// slower than a read) is read at five reads or more. The span is also what
// keeps a fast climb from costing a large share of failures: a doubling
// that overshoots costs what the early breach needs to see it (a read at a
// busy target, a few dozen attempts at a slow one), and the clean attempts
// the climb rested on must stay many against that (docs/design.md §5: at most 8 %
// of the attempts before settling fail). In rate mode one tick is what
// lets a robust target climb from 1/s to 3000/s in twelve seconds; a closed
// loop makes fewer attempts for its offer (N VUs with a second of think
// time make N a second), so it spends two ticks at each level and still
// reaches 90 % of a 2000-VU capacity within half a minute.
func (g *Governor) quickSpan() time.Duration {
	span := max(g.tick, g.limits.Window/quickWindows)
	if g.limits.Mode == Concurrency {
		span *= 2
	}
	return min(span, g.limits.Window)
}

// Shortest is the shortest a window at a new offer lasts before it can be
// judged: the quick climb's span (see WithQuickClimb) when it is on, the
// full Limits.Window when it is off. A host that brings a new offer in
// gradually (a phase staggering the start of the workers it adds) finishes
// well inside it, so the window that judges the offer sees all of it.
func (g *Governor) Shortest() time.Duration {
	if !g.quick {
		return g.limits.Window
	}
	return g.quickSpan()
}

// quickWindows: a quick window lasts at least Window/quickWindows, the
// default tick's share of it, however fine a tick the host asks for. A
// finer tick reads the counters more often; it does not shorten the time a
// target is given to show damage (a target that meters its load over a
// second showed none to 25 ms windows and was driven to 36 % failures).
const quickWindows = 5

// quickNeed is how many resolved attempts a clean window needs before the
// quick climb may close it at offer x: a tick's worth at the offer (in
// concurrency mode, one attempt per in-flight iteration, what a closed loop
// with a second of think time makes in a second), at least one, and never
// more than MinAttempts: at 1/s one clean attempt, at 2000/s twenty.
func (g *Governor) quickNeed(x float64) uint64 {
	need := math.Ceil(x * g.tick.Seconds())
	return uint64(max(1, min(float64(g.limits.MinAttempts), need)))
}

// quickReady reports whether a window whose evidence so far is damaged of n
// resolved attempts over span may be judged by the quick climb: on, at
// least quickSpan old (within half a read, as a full window), no damage at
// all (a window with any failure or unserved load waits for its full
// length: only a clean climb is decided early) and quickNeed attempts. The
// caller still checks that the decision, latency evidence included, is a
// multiplicative climb (climbs).
func (g *Governor) quickReady(damaged, n uint64, span time.Duration) bool {
	return g.quick && damaged == 0 && n >= g.quickNeed(g.offer) &&
		span >= g.quickSpan()-g.check/2
}

// quickClimb reports whether d is a decision the quick climb may take: a
// multiplicative climb (slow start, or a safe climb that stays in the
// proven-safe zone), far from the congestion point the memory holds.
// Probes, holds and the memory-clear streak wait for the full window and
// MinAttempts, as the seed has them. So does a safe climb that rounding up
// to a whole number took past 0.75 × last-bad (2 → 3 with last-bad 3): it
// is a probe in all but name.
func quickClimb(d Decision) bool {
	switch {
	case d.Kind != KindRaise:
		return false
	case d.Signal == SignalSlowStart:
		return true
	}
	return d.Signal == SignalSafeClimb && d.Offer <= safeZone*d.LastBad
}

// clearBreach reports whether damaged of n resolved attempts, fewer than
// MinAttempts, are a breach beyond doubt: so much damage would be less
// likely than the early breach's level at a true fraction of High (the
// same exact binomial test, see tailBelow). Four failures in five attempts
// are; one in five is not. A closed loop with think time near the floor
// gathers a handful of attempts a window, and a target failing most of them
// is not left at that offer for 4 × Window.
func (g *Governor) clearBreach(damaged, n uint64) bool {
	return g.quick && n > 0 && n < g.limits.MinAttempts && tailBelow(damaged, n, g.limits.High, g.fewLevel())
}

// fewLevel is the level clearBreach tests at: the early breach's, which is
// corrected for the looks a window takes, whether or not the early breach
// is on.
func (g *Governor) fewLevel() float64 {
	if g.alpha > 0 {
		return g.alpha
	}
	return earlyLevel(g.limits.Window, g.check)
}

// climbs reports whether the window w, judged now on the tick's load ld,
// would decide a multiplicative climb (see quickClimb): the latency knee
// neither holds it nor damages it, and Decide climbs. It changes nothing.
func (g *Governor) climbs(w Window, ld load) bool {
	w.Quick = true
	w, lat := g.latency(w, ld)
	return !lat.hold && w.Frac <= g.limits.Low && quickClimb(Decide(w.Frac, g.offer, g.lastBad, g.limits))
}

// fewBreach reports whether the early breach may decide on damaged of n
// attempts, fewer than MinAttempts, resolved so far in the window: with the
// quick climb, in concurrency mode, when the exact test says so. A closed
// loop with think time makes few requests for its offer (64 VUs thinking a
// second make 13 a read), and a doubling that overshoots was otherwise seen
// only after a tick: at 100 requests a second 8 % of the requests before
// settling failed against docs/design.md §5's bar of 8 %. Half of ten failing at a
// true fraction of High happens less often than the early breach's level.
// Rate mode keeps MinAttempts: there the offer is the request rate, a read
// at 100/s holds 20 attempts, and the fraction a back-off takes is then
// judged on enough of them (on a dozen, the simulated shed bars moved).
//
// A window that will hold many attempts when full is not judged so, unless
// it follows a multiplicative climb (slow start, safe climb: the overshoot
// this is for): near a target's limit its first read can be a lump (a
// limiter whose burst allowance is spent refuses the VUs that happen to
// send together), and 6 of 16 attempts at 107 VUs against a 100 r/s limit
// backed off to 66, the capacity reported 19 % low. Many is earlyEvidence ×
// MinAttempts over a Window at the rate seen so far over span or at the
// last window's pace per unit of offer, whichever is larger (a lump reads
// both ways: 7 attempts in 0.4 s at 105 VUs that made 100 a second a
// window before); a probe at three VUs thinking a second (fifteen attempts
// a window) is still judged on a few.
func (g *Governor) fewBreach(damaged, n uint64, span time.Duration) bool {
	if !g.quick || g.limits.Mode != Concurrency || n >= g.limits.MinAttempts {
		return false
	}
	rate := g.perOffer * g.offer // what the last window's pace makes at this offer
	if span > 0 {
		rate = max(rate, float64(n)/span.Seconds())
	}
	many := rate*g.limits.Window.Seconds() >= earlyEvidence*float64(g.limits.MinAttempts)
	return (!many || quickClimb(g.last)) && tailBelow(damaged, n, g.limits.High, g.alpha)
}
