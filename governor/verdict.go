// The verdict: a read gathers a window's evidence into one value (evidence),
// and one function (judge) says what that evidence concludes. Tick applies
// the verdict to the governor's state.

package governor

import "time"

// evidence is what one read knows of the current window: the record so far
// and the figures the judgement rests on. It is built once per read and
// only read after that.
type evidence struct {
	// w is the record so far: counts, FailFrac, the unserved-load fields,
	// Frac (failed plus unserved over what it rests on), By "unserved"
	// when the unserved load changed the fraction's class, Read.
	w   Window
	now time.Time
	// damaged of n: what the fraction rests on (resolved attempts plus the
	// unserved load that entered it).
	damaged, n uint64
	// full: the window has lasted its Window (within half a read).
	full bool
	// tail is the window's newest evidence (breach.go); breach whether the
	// early breach's test passed, on the tail or the window so far, and
	// breachFrac the fraction a back-off would apply to, read over the
	// newest breachSpan of the window.
	tail       tailEvidence
	breach     bool
	breachFrac float64
	breachSpan time.Duration
	// unreach counts the window's attempts that found no server.
	unreach uint64
	// ld is the host's load at this read.
	ld load
}

// step is what a verdict asks Tick to do.
type step uint8

const (
	stepCollect    step = iota // nothing is decided yet: keep collecting
	stepDecided                // the window is judged: verdict.w.Decision
	stepOutageOver             // the target answers again: a fresh window starts
)

// verdict is what a window's evidence concludes. A hold names its reason
// in its decision's signal: SignalDeadBand (the failures sit between Low
// and High), SignalLatency (the latency knee: the target has started to
// queue), SignalNoEvidence (too few attempts at 4 × Window),
// SignalGeneratorSaturated (the host, not the target, limited the load) or
// SignalOutage (the target is unreachable); SignalAtCeiling and
// SignalAtFloor are moves a limit stopped.
type verdict struct {
	step step
	// w is the judged record: Frac is the fraction it was judged on, By the
	// evidence that decided it, w.Decision the decision and w.Streak the
	// memory streak after it.
	w Window
	// baseline is the run's low-load latency after the window.
	baseline time.Duration
	// loud: the movement line logs at info even for a hold (an outage's
	// first window).
	loud bool
}

// judge is the one judgement of a window: from the read's evidence e and
// the governor's state (offer, last-bad, streak, baseline, outage) it
// returns the verdict. It changes nothing; Tick applies the verdict.
func (g *Governor) judge(e evidence) verdict {
	w := e.w
	if e.full && e.breach && e.breachFrac > w.Frac {
		// The read that closes the window judges its tail first too: a
		// target that changed in the window's last read would otherwise be
		// judged on evidence mostly gathered before the change.
		w.Frac, w.Tail = e.breachFrac, e.breachSpan
	}
	if g.loadc != nil {
		whole := outage(w.OK+w.Failed, e.unreach)
		switch g.outageRead(whole || e.tail.outage, e.tail.n >= minOutageAttempts && !e.tail.outage, e.full) {
		case outageWait:
			return verdict{step: stepCollect}
		case outageHold:
			return g.outageVerdict(w)
		case outageOver:
			w.Decision, w.Streak = g.hold(SignalOutage), g.streak
			return verdict{step: stepOutageOver, w: w, baseline: g.baseline}
		}
	}
	// A window short of its full length or of MinAttempts is judged now only
	// by the quick climb (clean evidence enough for a multiplicative climb)
	// or, once full, on a breach beyond doubt (see quick.go).
	short := e.n < g.limits.MinAttempts
	quick := !e.breach && !w.GeneratorSaturated && g.quickReady(e.damaged, e.n, e.now.Sub(w.Start))
	clear := e.full && short && g.clearBreach(e.damaged, e.n)
	switch {
	case !e.full && e.breach:
		// Inside the window only a gross breach is decided: one that the
		// evidence shows with confidence, and that moves the offer (a
		// breach at the floor waits for the full window like any hold).
		d := Decide(e.breachFrac, g.offer, g.lastBad, g.limits)
		if d.Offer == g.offer {
			return verdict{step: stepCollect}
		}
		w.Early = true
		if e.breachFrac != w.Frac {
			w.Frac, w.Tail = e.breachFrac, e.breachSpan
		}
		return g.decided(w, d, false)
	case (!e.full || short) && !quick && !clear, (!e.full || short) && !clear && !g.climbs(w, e.ld):
		if !e.full || e.now.Before(g.holdAt) {
			return verdict{step: stepCollect}
		}
		// A no-evidence hold: visible, and it breaks the memory streak, but
		// it discards nothing (Tick does not restart the window), so a slow
		// offer (1/s with 20 attempts needed) is judged once it has the
		// evidence instead of holding forever.
		return g.decided(w, g.hold(SignalNoEvidence), false)
	case w.GeneratorSaturated && g.evidence&EvidenceGenerator != 0 && w.Frac <= g.limits.High:
		// The host could not deliver the offer: nothing this window saw
		// says where the target's limit is, so hold, and break the streak.
		w.By = "generator"
		return g.decided(w, g.hold(SignalGeneratorSaturated), false)
	}
	w.Quick = !e.full || short
	w, lat := g.latency(w, e.ld)
	if lat.hold && w.Frac <= g.limits.Low {
		// The latency knee: the target has started to queue (see
		// latencyKneeHold). The failures alone would have climbed; the
		// latency holds the offer, and says so.
		w.By = "latency"
		v := g.decided(w, g.hold(SignalLatency), false)
		v.baseline = lat.baseline
		return v
	}
	d := Decide(w.Frac, g.offer, g.lastBad, g.limits)
	v := g.decided(w, d, w.Frac <= g.limits.Low && g.lastBad > 0 && g.offer >= g.lastBad)
	v.baseline = lat.baseline
	return v
}

// hold is a hold at the committed offer with the given reason.
func (g *Governor) hold(reason Signal) Decision {
	return Decision{Kind: KindHold, Signal: reason, From: g.offer, Offer: g.offer, LastBad: g.lastBad}
}

// decided completes a judged window's verdict: the memory streak after it
// (qualifies: clean and judged at or above last-bad, see MemoryClearStep),
// and the memory cleared when the streak completes.
func (g *Governor) decided(w Window, d Decision, qualifies bool) verdict {
	streak, clears := MemoryClearStep(g.streak, qualifies)
	if clears {
		d.LastBad = 0
		d.Signal = SignalMemoryCleared
	}
	w.Decision, w.Streak = d, streak
	return verdict{step: stepDecided, w: w, baseline: g.baseline}
}

// outageVerdict is an outage window's verdict: a hold. On entering an
// outage, a back-off the previous window took on failures mostly
// unreachable (the outage's first moments, read as congestion before it
// was plain) is undone: the offer asked for is that window's, and last_bad
// what it was before it. The streak is left as it was.
func (g *Governor) outageVerdict(w Window) verdict {
	offer, lastBad := g.offer, g.lastBad
	entering := !g.out
	if entering && g.last.Kind == KindLower && g.last.Signal == SignalBackoff && g.lastUnreach {
		offer, lastBad = g.last.From, g.prev.LastBad
	}
	w.Decision = Decision{Kind: KindHold, Signal: SignalOutage, From: g.offer, Offer: offer, LastBad: lastBad}
	w.Streak = g.streak
	return verdict{step: stepDecided, w: w, baseline: g.baseline, loud: entering}
}
