// The early breach: a window whose evidence shows a failure fraction above
// High with confidence closes at the read that shows it (WithEarlyBreach).
// The test is an exact binomial tail; the evidence is the window's tail or
// the window so far.

package governor

import (
	"math"
	"time"
)

// checksPerTick is how many times a tick Run reads the counters while the
// early breach is on: a gross breach on a busy target is cut after a fifth
// of a tick instead of a whole one. Never more often than every minCheck:
// a finer read only burns CPU.
const (
	checksPerTick = 5
	minCheck      = time.Millisecond
)

// afterBackoffEvidence is, in MinAttempts, how many attempts let an early
// breach rest on less in the window right after a back-off, with the quick
// climb (see enough).
const afterBackoffEvidence = 2

// earlyEvidence is, in MinAttempts, how many attempts let an early breach
// rest on less than a tick of evidence: the fraction it backs off by is
// then good to about one attempt in a hundred.
const earlyEvidence = 5

// earlyAlpha is the chance, per window, that the early breach cuts short a
// window whose true fraction is at High.
const earlyAlpha = 0.01

// earlyLevel is the chance each of the early breach's tests may take of
// cutting short, by chance, a window whose true fraction is High. Each read
// looks twice (the tail, the window so far), so a window looks up to
// 2 × window/check times; earlyAlpha over that many looks (Bonferroni) keeps
// a window at High from being cut short more often than earlyAlpha, however
// finely it is read: 0.0002 a test for a 5 s window read every 200 ms.
func earlyLevel(window, check time.Duration) float64 {
	return earlyAlpha / (2 * math.Ceil(float64(window)/float64(check)))
}

// tailBelow reports whether P(X >= k) < alpha for X ~ Binomial(n, p),
// 0 < p < 1. It is the early breach's test: k damaged of n is a breach with
// confidence when so many would be this unlikely at a true fraction of
// High. (A normal-approximation bound, such as Wilson's, is several times
// too generous this far into a skewed binomial's tail: with it, 2 to 4.4 % of
// windows at a true 5 % were cut short where 1 % was asked for.) Above the
// mean the terms of the tail fall from the first on, each by at most the
// first ratio, so the first term and that geometric bound settle nearly
// every call without summing.
func tailBelow(k, n uint64, p, alpha float64) bool {
	if k == 0 || float64(k) <= float64(n)*p {
		return false // at or below the mean: never a breach
	}
	first := binomialPMF(k, n, p)
	if first >= alpha {
		return false
	}
	ratio := float64(n-k) / float64(k+1) * p / (1 - p)
	if first/(1-ratio) < alpha {
		return true
	}
	return binomialTail(k, n, p) < alpha
}

// binomialPMF is P(X = k) for X ~ Binomial(n, p), computed in log space.
func binomialPMF(k, n uint64, p float64) float64 {
	nf, kf := float64(n), float64(k)
	lgN, _ := math.Lgamma(nf + 1)
	lgK, _ := math.Lgamma(kf + 1)
	lgNK, _ := math.Lgamma(nf - kf + 1)
	return math.Exp(lgN - lgK - lgNK + kf*math.Log(p) + (nf-kf)*math.Log1p(-p))
}

// binomialTail is P(X >= k) for X ~ Binomial(n, p), k above the mean,
// summed term by term from k until the terms no longer add to it.
func binomialTail(k, n uint64, p float64) float64 {
	nf, odds := float64(n), p/(1-p)
	sum, term := 0.0, binomialPMF(k, n, p)
	for i := float64(k); i <= nf && term >= 1e-16*sum; i++ {
		sum += term
		term *= (nf - i) / (i + 1) * odds
	}
	return math.Min(1, sum)
}

// tailEvidence is the evidence of a window's tail: what resolved (and, when
// it counts, went unserved) since the read the tail starts at.
type tailEvidence struct {
	span       time.Duration
	damaged, n uint64
	outage     bool // the tail is an outage (outage.go)
}

// read is the counters as one of Run's reads saw them.
type read struct {
	at       time.Time
	ok, fail uint64
	ld       load
}

// tail returns the window's tail at now: the evidence since the newest
// earlier read that leaves enough for an early breach (see enough), or the
// whole window when none does. It then records now's read and forgets the
// reads a later tail can no longer start from: those before the newest read
// a tick or more old.
func (g *Governor) tail(now time.Time, okN, failN uint64, ld load) tailEvidence {
	from := read{at: g.winStart, ok: g.baseOK, fail: g.baseFail, ld: g.baseLoad}
	for i := len(g.reads) - 1; i >= 0; i-- {
		if r := g.reads[i]; g.enough(okN+failN-r.ok-r.fail, now.Sub(r.at)) {
			from = r
			break
		}
	}
	g.reads = append(g.reads, read{at: now, ok: okN, fail: failN, ld: ld})
	for i := len(g.reads) - 1; i > 0; i-- {
		if now.Sub(g.reads[i].at) >= g.tick {
			g.reads = append(g.reads[:0], g.reads[i:]...)
			break
		}
	}
	t := tailEvidence{span: now.Sub(from.at), damaged: failN - from.fail, n: okN - from.ok + failN - from.fail,
		outage: outage(okN-from.ok+failN-from.fail, ld.Unreachable-from.ld.Unreachable)}
	if g.countsUnserved() {
		_, _, u := g.unserved(from.ld, ld)
		t.damaged += u
		t.n += u
	}
	return t
}

// earlyFrac decides the early breach at a read of a window whose evidence
// so far is damaged of n (fraction frac) gathered over span, and whose tail
// is tail. It returns the fraction the seed's back-off applies to, the
// span of evidence it was read over, and whether the window breaches early. A stretch breaches when it holds
// enough evidence (see enough) and so much damage would be less likely than
// g.alpha at a true fraction of High (see tailBelow). The tail comes first: when it breaches and the evidence
// before it did not, the target changed inside the window, the older
// evidence dilutes the window's fraction, and a back-off on it would be too
// shallow (a second breach follows); the tail is evidence at the same
// committed offer, only newer. Otherwise the window's own fraction is used.
// With the quick climb the back-off takes the fraction since the damage
// began when it is larger (see onsetFrac).
func (g *Governor) earlyFrac(frac float64, damaged, n uint64, span time.Duration, tail tailEvidence) (float64, time.Duration, bool) {
	breaches := func(damaged, n uint64, span time.Duration) bool {
		return g.enough(n, span) && tailBelow(damaged, n, g.limits.High, g.alpha)
	}
	if !g.early {
		return 0, 0, false
	}
	// deeper is the onset's fraction and span when it is larger than f.
	deeper := func(f float64, over time.Duration) (float64, time.Duration, bool) {
		if of, ospan := g.onsetFrac(); of > f {
			return of, ospan, true
		}
		return f, over, true
	}
	if tail.n < n && breaches(tail.damaged, tail.n, tail.span) {
		// The tail decides alone when the evidence before it did not
		// breach: the target changed inside the window, and the older
		// evidence would dilute the fraction. When it breached too, the
		// whole window is the same breach on more evidence.
		if float64(damaged-tail.damaged) <= g.limits.High*float64(n-tail.n) {
			return deeper(float64(tail.damaged)/float64(tail.n), tail.span)
		}
		return frac, span, true
	}
	if breaches(damaged, n, span) || g.fewBreach(damaged, n, span) {
		return deeper(frac, span)
	}
	return 0, 0, false
}

// onsetFrac is, in the window after a multiplicative climb (slow start, a
// safe climb) with the quick climb, the fraction of the window's evidence
// since its damage began: the failed share of what resolved since the
// newest read that leaves at least MinAttempts after it, when the window
// before that read was within High (failures only, see between). 0 when no
// read qualifies (the damage was there from the start, or too little
// followed it) or the quick climb is off. span is how long ago that read
// was.
//
// A limiter with a burst allowance (nginx's limit_req burst=) lets the
// excess of an offer through until the allowance is spent, then refuses all
// of it: a slow-start doubling's window is clean for a while, then fails
// most of what comes. Its fraction over the whole window (or over the tail,
// which holds a tick or five MinAttempts) mixes the two, and the seed's
// back-off on it lands far above the target's rate, so a second and a third
// back-off follow, each costing a breach's failures (256 VUs against a 100
// r/s limit backed off to 206, 121, then 95: 63 of the 83 failures before
// settling came after the first breach was seen). Since the damage began
// the evidence is at the same committed offer, only newer; the back-off
// uses the larger fraction. Deciding the breach still needs the evidence
// enough asks for; only its depth reads the onset. After a probe or a hold
// the excess is small and a spent allowance refuses in lumps: the newest
// read alone (a few dozen attempts) would back off a third on a window
// that failed 3 %, so there the tail's fraction stands.
func (g *Governor) onsetFrac() (frac float64, span time.Duration) {
	if !g.quick || !quickClimb(g.last) || len(g.reads) < 2 {
		return 0, 0
	}
	now := g.reads[len(g.reads)-1]
	base := read{ok: g.baseOK, fail: g.baseFail}
	for i := len(g.reads) - 2; i >= 0; i-- {
		damaged, n := g.between(g.reads[i], now)
		if n < g.limits.MinAttempts {
			continue
		}
		if pd, pn := g.between(base, g.reads[i]); float64(pd) > g.limits.High*float64(pn) {
			return 0, 0
		}
		return float64(damaged) / float64(n), now.at.Sub(g.reads[i].at)
	}
	return 0, 0
}

// between returns the failed and resolved attempts between two reads of
// the window. The onset reads failures only: it is for a limiter's
// refusals, and unserved load read over one or two reads is mostly the
// in-flight count's own jitter (the tail, which holds five MinAttempts or
// a tick, reads it).
func (g *Governor) between(from, to read) (failed, n uint64) {
	return to.fail - from.fail, to.ok + to.fail - from.ok - from.fail
}

// enough reports whether n attempts resolved over span are enough for an
// early breach to rest on: at least MinAttempts, and either earlyEvidence ×
// MinAttempts of them or a whole tick. A busy target is judged on a fifth
// of a tick; a slow one waits for a tick, as it did when the counters were
// read once a tick, so its back-off is not taken on a handful of attempts.
// (Resting it on MinAttempts at any read, once the exact test passes, made
// the tail of a window at 3.5 % breach on 7 failures of 23 and back off by
// 30 %, and the fraction of a slow-start overshoot judged on a dozen
// attempts moved where the offer settled: the simulated bars missed.)
// With the quick climb, the window right after a back-off needs only
// afterBackoffEvidence × MinAttempts: the target has just shown overload,
// and a back-off that did not go deep enough is met again at a few hundred
// requests a second, where waiting for five MinAttempts cost a read's worth
// of refusals more at each step (issue 28's nginx: 42 of 83 failures before
// settling in the second back-off's window).
func (g *Governor) enough(n uint64, span time.Duration) bool {
	if g.quick && g.last.Signal == SignalBackoff && n >= afterBackoffEvidence*g.limits.MinAttempts {
		return true
	}
	return n >= g.limits.MinAttempts && (n >= earlyEvidence*g.limits.MinAttempts || span >= g.tick)
}
