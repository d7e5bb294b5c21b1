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
// on it; and after a raise the settle span is at most one read (Check). See
// the package doc, "Evidence at low attempt rates". Off gives the seed's
// cadence: every window lasts Window and holds MinAttempts attempts.
func WithQuickClimb(on bool) Option { return func(g *Governor) { g.quick = on } }

// quickSpan is, in ticks, how long a window lasts at least before the quick
// climb may close it: half a tick, so damage that takes a moment to show
// (a queue building at a shedding target's door, answers slower than the
// read) is read at two or more reads, while a robust target climbs from 1/s
// to several thousand a second in about ten seconds.
const quickSpan = 0.5

// quickNeed is how many resolved attempts a clean window needs before the
// quick climb may close it at offer x: the attempts half a tick at the
// offer brings (in concurrency mode, one attempt a second per in-flight
// iteration, what a closed loop with a second of think time makes), at least
// one, and never more than MinAttempts.
func (g *Governor) quickNeed(x float64) uint64 {
	need := math.Ceil(x * quickSpan * g.tick.Seconds())
	return uint64(max(1, min(float64(g.limits.MinAttempts), need)))
}

// quickReady reports whether a window whose evidence so far is damaged of n
// resolved attempts over span may be judged by the quick climb: on, at least
// quickSpan ticks old, no damage at all (a window with any failure, unserved
// load or latency evidence waits for its full length: only a clean climb is
// decided early) and quickNeed attempts. The caller still checks that the
// decision is a multiplicative climb.
func (g *Governor) quickReady(damaged, n uint64, span time.Duration) bool {
	return g.quick && damaged == 0 && n >= g.quickNeed(g.offer) &&
		span >= time.Duration(quickSpan*float64(g.tick))
}

// quickClimb reports whether d is a decision the quick climb may take: a
// multiplicative climb (slow start or safe climb), far from the congestion
// point the memory holds. Probes, holds and the memory-clear streak wait
// for the full window and MinAttempts, as the seed has them.
func quickClimb(d Decision) bool {
	return d.Kind == KindRaise && (d.Signal == SignalSlowStart || d.Signal == SignalSafeClimb)
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
// would decide a multiplicative climb (see quickClimb). It changes nothing:
// the latency knee's baseline is restored.
func (g *Governor) climbs(w *Window, ld load, n uint64) bool {
	probe, baseline := *w, g.baseline
	g.latencyKnee(&probe, ld, n)
	g.baseline = baseline
	return probe.Frac <= g.limits.Low && quickClimb(Decide(probe.Frac, g.offer, g.lastBad, g.limits))
}
