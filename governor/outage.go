// Outage is not congestion: a window whose attempts (nearly) all found no
// server says nothing about the target's capacity.

package governor

import "time"

// OutageFrac is the share of a stretch's resolved attempts that must be
// unreachable (Load.Unreachable: refused, reset before any answer, name
// unresolved, connect timed out) for the stretch to be an outage. A target
// that answers, even 503 to everything, is shedding load, not out: that is
// congestion, judged by the seed's rules.
const OutageFrac = 0.9

// minOutageAttempts is the least evidence an outage is called on: a few
// refusals in a row are a blip, not an outage.
const minOutageAttempts = 5

// OutageProbes is how many iterations a host starts per tick while the
// governor judges an outage (State.Outage): the offer holds, but only these
// few probes go out to watch for the target's return instead of the whole
// held offer; when they are answered again the outage ends and the held
// offer runs at once.
const OutageProbes = 5

// outage reports whether n resolved attempts of which unreach found no
// server are an outage.
func outage(n, unreach uint64) bool {
	return n >= minOutageAttempts && float64(unreach) >= OutageFrac*float64(n)
}

// What a read does about an outage.
type outageStep uint8

const (
	outageNone outageStep = iota // no outage: the seed's rules
	outageWait                   // out, window not over: keep collecting
	outageHold                   // an outage window: hold
	outageOver                   // the target answers again: a fresh window starts
)

// outageRead is the outage's part of a read: out is whether the window
// or its tail is an outage, answered whether the tail holds enough
// attempts and is not one, full whether the window has lasted its length.
// An outage is entered at the first read that shows it (the tail is
// enough, so no back-off is taken on it). While out, a read whose tail is
// answered ends it; otherwise the window is recorded at its end as one
// more outage window.
func (g *Governor) outageRead(out, answered, full bool) outageStep {
	switch {
	case !g.out && out:
		return outageHold
	case !g.out:
		return outageNone
	case answered || g.probesAnswered():
		return outageOver
	case !full:
		return outageWait
	}
	return outageHold
}

// probesAnswered reports whether, during an outage, the probes resolved
// since the previous read were mostly answered: with only OutageProbes
// attempts a tick the tail may hold too few to show it, and the target's
// return must not wait for a window's worth of evidence.
func (g *Governor) probesAnswered() bool {
	if len(g.reads) < 2 {
		return false
	}
	cur, prev := g.reads[len(g.reads)-1], g.reads[len(g.reads)-2]
	ok, n := cur.ok-prev.ok, cur.ok-prev.ok+cur.fail-prev.fail
	return ok > 0 && 2*ok > n && !outage(n, cur.ld.Unreachable-prev.ld.Unreachable)
}

// endOutage ends an outage at the read whose tail answers (w is the
// verdict's record, a hold with signal outage): the window so far is
// recorded as the outage's last (so the timeline spans it whole), one
// movement line says it is over, and a fresh window starts at the held
// offer, the seed's rules going on from there. Called with g.mu held; it
// releases it.
func (g *Governor) endOutage(w Window, now time.Time, okN, failN uint64, ld load) (float64, bool) {
	d := w.Decision
	g.out = false
	g.prev, g.last = g.last, d
	g.windows++
	g.restart(now, okN, failN, ld)
	g.mu.Unlock()
	g.log.Info("throttle", "phase", g.phase, "offer", num(d.Offer), "signal", "outage-over", "last_bad", num(d.LastBad))
	if g.observe != nil {
		g.observe(w)
	}
	return 0, false
}
