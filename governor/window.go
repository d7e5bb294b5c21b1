// The window: its record (Window) and the read that judges it (Tick).

package governor

import (
	"time"
)

// Window is the record of one closed window: the evidence gathered at one
// committed offer and what it decided. Hosts draw timelines and reports from
// these without re-deriving anything.
//
// A no-evidence hold is recorded too, but it does not end the window: the
// window keeps collecting at the same offer, and the record that finally
// judges it spans from the same Start.
type Window struct {
	Start, End time.Time
	// Offer is the committed offer the window was judged at.
	Offer      float64
	OK, Failed uint64
	// Frac is Failed / (OK + Failed), 0 when the window resolved nothing.
	Frac     float64
	Decision Decision
	// Streak is the congestion-memory streak after the window.
	Streak int
	// Early is true for a window closed before its full duration by an
	// early breach (WithEarlyBreach): its evidence showed a failure fraction
	// above High with confidence, so the back-off did not wait.
	Early bool
	// Tail is, for a breach judged on the window's tail alone (its newest
	// evidence, see WithEarlyBreach), how long that tail was; Frac is then
	// the tail's fraction, while OK and Failed still count the whole window.
	// 0 for every other window.
	Tail time.Duration

	// The evidence beyond failed attempts (WithEvidence), all zero when the
	// host's Counters do not implement LoadCounters.
	//
	// FailFrac is Failed / (OK + Failed), the attempt-failure fraction
	// alone; Frac is the fraction the window was judged on, which also
	// holds what the kinds of evidence below added.
	FailFrac float64
	// Dropped counts arrivals the host could not start during the window,
	// Queued the growth of in-flight attempts over it (negative when they
	// fell), Unserved what of both entered Frac (rate mode: Dropped plus
	// Queued when it grew; 0 when generator-saturated or switched off).
	Dropped  uint64
	Queued   int64
	Unserved uint64
	// Latency is the mean latency of the window's resolved attempts,
	// Baseline the run's low-load baseline it was compared with and
	// Inflation their ratio (concurrency mode, EvidenceLatency).
	Latency, Baseline time.Duration
	Inflation         float64
	// Waiting is, in concurrency mode, the share of the in-flight
	// iterations that only waited: the latency's excess over the baseline
	// divided by the loop's cycle (response plus think time, by Little's
	// law offer × span / resolved). Without think time it is
	// 1 − 1/Inflation; with a second of think time a 0.1 ms excess is a
	// ten-thousandth. 0 when latency was not judged or within the noise.
	Waiting float64
	// GeneratorSaturated is true when the host said it was saturated at
	// any tick of the window.
	GeneratorSaturated bool
	// Quick is true for a window judged before it held the seed's evidence
	// (its full Window and MinAttempts attempts): a clean multiplicative
	// climb or a breach beyond doubt (WithQuickClimb).
	Quick bool
	// Drained is how long the window's start waited, after the settle
	// span, for attempts started before a back-off to resolve.
	Drained time.Duration
	// By names the evidence that decided the window when it was not failed
	// attempts alone: "unserved", "latency" or "generator"; "" otherwise.
	By string
	// Read is the evidence the window read: WithEvidence's set when the
	// host's Counters report Load, EvidenceNone when they do not.
	Read Evidence
}

// Tick is one read of the counters at time now. When it returns ok, the
// caller must write ask to the control path (origin Governor) and later pass
// the confirmation to Confirm; until then Tick gathers no evidence. The first
// Tick asks for the start offer.
func (g *Governor) Tick(now time.Time) (ask float64, ok bool) {
	g.mu.Lock()
	if !g.started {
		g.started, g.pending, g.asked = true, true, g.limits.Start
		g.mu.Unlock()
		return g.limits.Start, true
	}
	if g.pending {
		g.mu.Unlock()
		return 0, false
	}
	okN, failN := g.counters.Attempts()
	ld := g.readLoad(okN, failN)
	if !g.settleUntil.IsZero() {
		// Run schedules its ticks from the confirmation, so with the default
		// settle span (one tick) the span ends exactly on a tick.
		if now.Before(g.settleUntil) {
			g.mu.Unlock()
			return 0, false
		}
		if g.drainFrom.IsZero() {
			g.drainFrom = now
		}
		// Drain: after a back-off, wait (at most drainBound windows) until
		// the attempts started at the old offer have resolved.
		if g.drainTarget > 0 && ld.resolved < g.drainTarget && now.Before(g.drainUntil) {
			g.mu.Unlock()
			return 0, false
		}
		// Settled: the window starts here, on evidence of the new offer only.
		g.settleUntil = time.Time{}
		g.restart(now, okN, failN, ld)
		g.mu.Unlock()
		return 0, false
	}
	if okN < g.baseOK || failN < g.baseFail || ld.Started < g.baseLoad.Started || ld.Dropped < g.baseLoad.Dropped || ld.Latency < g.baseLoad.Latency {
		// Counters went backwards (a host reset them): the window's evidence
		// is unknowable, so start it again.
		g.restart(now, okN, failN, ld)
		g.mu.Unlock()
		return 0, false
	}
	g.satSeen = g.satSeen || ld.GeneratorSaturated
	e := g.evidenceAt(now, okN, failN, ld)
	v := g.judge(e)
	switch v.step {
	case stepCollect:
		g.mu.Unlock()
		return 0, false
	case stepOutageOver:
		return g.endOutage(v.w, now, okN, failN, ld)
	}
	return g.apply(v, e.n, now, okN, failN, ld)
}

// evidenceAt gathers the current window's evidence at the read now of the
// counters okN, failN and the load ld. It records the read (the early
// breach's tail starts at one of them) and changes nothing else.
func (g *Governor) evidenceAt(now time.Time, okN, failN uint64, ld load) evidence {
	dOK, dFail := okN-g.baseOK, failN-g.baseFail
	e := evidence{now: now, ld: ld, n: dOK + dFail}
	e.w = Window{Start: g.winStart, End: now, Offer: g.offer, OK: dOK, Failed: dFail, Drained: g.drained}
	if g.loadc != nil {
		e.w.Read = g.evidence
	}
	if e.n > 0 {
		e.w.FailFrac = float64(dFail) / float64(e.n)
	}
	e.damaged = g.evidenceOf(&e.w, ld)
	// n counts what the fraction rests on: resolved attempts plus the
	// unserved load that entered it.
	e.n += e.w.Unserved
	if e.n > 0 {
		e.w.Frac = float64(e.damaged) / float64(e.n)
	}
	if e.w.Unserved > 0 && g.class(e.w.Frac) != g.class(e.w.FailFrac) {
		e.w.By = "unserved"
	}
	// A read within half a read of the window's end closes it: reads
	// jitter, and waiting for the next one would stretch the window by a
	// whole read. End − Start is what the window really covered.
	e.full = !now.Before(g.winStart.Add(g.limits.Window - g.check/2))
	e.tail = g.tail(now, okN, failN, ld)
	e.breachFrac, e.breachSpan, e.breach = g.earlyFrac(e.w.Frac, e.damaged, e.n, now.Sub(g.winStart), e.tail)
	e.unreach = ld.Unreachable - g.baseLoad.Unreachable
	return e
}

// apply adopts a judged window's verdict v, read at now on n attempts: the memory, the
// streak, the baseline, the next offer (asked for on the control path, or
// the window restarted at the same offer; a no-evidence hold restarts
// nothing), then the movement line and the observer. Called with g.mu
// held; it releases it.
func (g *Governor) apply(v verdict, n uint64, now time.Time, okN, failN uint64, ld load) (float64, bool) {
	w, d := v.w, v.w.Decision
	g.streak, g.lastBad, g.baseline = w.Streak, d.LastBad, v.baseline
	g.prev, g.last = g.last, d
	unreach := ld.Unreachable - g.baseLoad.Unreachable
	g.lastUnreach = 2*unreach > w.Failed
	switch d.Signal {
	case SignalNoEvidence:
		// The next no-evidence hold of this window, if it stays short.
		g.holdAt = now.Add(noEvidenceSpan * g.limits.Window)
	case SignalOutage:
		g.out, g.lastUnreach = true, false
	}
	g.windows++
	if span := w.End.Sub(w.Start).Seconds(); span > 0 && w.Offer > 0 && d.Signal != SignalNoEvidence {
		g.perOffer = float64(w.OK+w.Failed) / span / w.Offer
	}
	switch {
	case d.Signal == SignalNoEvidence:
		// The window goes on: nothing restarts.
	case d.Offer != g.offer:
		g.pending, g.asked = true, d.Offer
	default:
		g.restart(now, okN, failN, ld)
	}
	g.mu.Unlock()

	g.logWindowAt(w, n, v.loud)
	if g.observe != nil {
		g.observe(w)
	}
	if d.Offer != w.Offer {
		return d.Offer, true
	}
	return 0, false
}

// class is a fraction's class: 0 clean, 1 dead band, 2 breach.
func (g *Governor) class(frac float64) int {
	switch {
	case frac > g.limits.High:
		return 2
	case frac > g.limits.Low:
		return 1
	}
	return 0
}
