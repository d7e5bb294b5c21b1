package governor

import (
	"strings"
	"time"
)

// Evidence is a set of the kinds of evidence, beyond failed attempts, that
// enter a window's fraction. Each is read only when the host's Counters also
// implement LoadCounters; with none of them (EvidenceNone, or Counters
// without Load) a window is judged on failed attempts alone, the seed's
// exact rule. The default is EvidenceAll.
type Evidence uint8

// The kinds of evidence. Their names are what the movement line, the report
// and the CLI's --evidence flag call them.
const (
	// EvidenceUnserved (rate mode): arrivals dropped for want of a free
	// worker and the growth of in-flight attempts over the window count as
	// damage beside failed attempts (growth beyond 1 + offer × the
	// baseline latency: within that, in flight only jitters). The window's fraction becomes
	// (failed + unserved) / (resolved + unserved): for a target that sheds
	// the excess this is the shed model's (x − c)/x, and for one that queues
	// it is the same fraction, visible before any request fails.
	EvidenceUnserved Evidence = 1 << iota
	// EvidenceLatency: latency inflated against the run's low-load
	// baseline is damage (Little's-law knee; see the package doc). In rate
	// mode it counts only from 4× the baseline and more than a tenth of a
	// tick of excess: there it catches the standing queue a back-off left
	// behind, unless it shrank over the window (draining), and its damage
	// is the queue's share of the window's load, excess/(excess + window),
	// at most the seed's smallest trim (10 %).
	EvidenceLatency
	// EvidenceDrain: after a back-off, the next window starts only once the
	// attempts started before the change have resolved (bounded by one
	// window), so a backlog queued at the old offer does not judge the new.
	EvidenceDrain
	// EvidenceGenerator: a window in which the host said it was saturated
	// (Load.GeneratorSaturated at any tick) does not count its unserved load
	// as the target's damage, and holds (signal generator-saturated) unless
	// its failed attempts alone breach.
	EvidenceGenerator

	EvidenceNone Evidence = 0
	EvidenceAll           = EvidenceUnserved | EvidenceLatency | EvidenceDrain | EvidenceGenerator
)

var evidenceNames = []struct {
	e    Evidence
	name string
}{{EvidenceUnserved, "unserved"}, {EvidenceLatency, "latency"}, {EvidenceDrain, "drain"}, {EvidenceGenerator, "generator"}}

// String lists the kinds in e, comma-separated, or "none".
func (e Evidence) String() string {
	var names []string
	for _, n := range evidenceNames {
		if e&n.e != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// ParseEvidence reads a comma-separated list of kinds ("unserved,latency"),
// "all" or "none".
func ParseEvidence(s string) (Evidence, bool) {
	var e Evidence
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "all":
			e |= EvidenceAll
			continue
		case "none":
			continue
		}
		found := false
		for _, n := range evidenceNames {
			if n.name == f {
				e, found = e|n.e, true
			}
		}
		if !found {
			return 0, false
		}
	}
	return e, true
}

// WithEvidence sets the kinds of evidence beyond failed attempts a window
// reads (default EvidenceAll). EvidenceNone gives the seed's exact rule.
func WithEvidence(e Evidence) Option { return func(g *Governor) { g.evidence = e } }

// The latency knee (concurrency mode, EvidenceLatency). Inflation is a
// window's mean attempt latency over the run's baseline, the lowest mean of
// any window with evidence. Up to kneeNoise it is noise; up to kneeHold
// the target is starting to queue: the window holds with its own reason,
// SignalLatency (a settled window, like a dead-band hold); above it, the share of the in-flight attempts that only wait, 1 − 1/I by
// Little's law, is the window's damage fraction, so the seed's back-off
// takes the offer to about the knee.
const (
	kneeNoise = 1.25
	kneeHold  = 1.5
	// standingQueueTicks: in rate mode latency counts only when the mean
	// exceeds the baseline by more than tick/standingQueueTicks.
	standingQueueTicks = 10
	// standingQueueFactor: in rate mode latency counts only from this
	// inflation on (the report calls a target that queued at 4× too).
	standingQueueFactor = 4
	// standingQueueMax caps the rate-mode latency fraction at the seed's
	// smallest trim (1 − backoffMax): a standing queue needs the offer below
	// capacity to drain, and how deep it is says how long draining takes,
	// not how far the offer is above capacity (that is what unserved load
	// measures). Any margin drains it; the windows that see it shrink are
	// not judged on it.
	standingQueueMax = 1 - backoffMax
)

// LatencyFloor: in concurrency mode an excess over the baseline up to it is
// the host's jitter, whatever the inflation: a sub-millisecond answer moving
// by a tenth of a millisecond (p50 0.18 → 0.28 ms, inflation 1.5) is
// scheduling noise on a busy host, not a queue. A queue that matters waits a
// millisecond or more. The report's "the target queues" verdict uses it too.
const LatencyFloor = time.Millisecond

// load is a read of LoadCounters with the attempt counts of the same tick.
type load struct {
	Load
	resolved uint64
}

func (l load) inFlight() uint64 {
	if l.Started < l.resolved {
		return 0
	}
	return l.Started - l.resolved
}

// drainBound is how long, at most, a window waits after a back-off for the
// attempts started before it to resolve, in windows.
const drainBound = 1

// readLoad reads the host's Load when its counters report one; the zero
// load otherwise. Started is read after the attempt counts (LoadCounters'
// contract), so in flight is never negative.
func (g *Governor) readLoad(okN, failN uint64) load {
	if g.loadc == nil {
		return load{}
	}
	return load{Load: g.loadc.Load(), resolved: okN + failN}
}

// evidenceOf fills w's unserved-load fields from the tick's load ld and
// returns the damaged count the window's fraction rests on: failed
// attempts, plus the unserved load in rate mode (EvidenceUnserved) unless
// the host said it was saturated (EvidenceGenerator).
func (g *Governor) evidenceOf(w *Window, ld load) (damaged uint64) {
	damaged = w.Failed
	if g.loadc == nil {
		return damaged
	}
	w.GeneratorSaturated = g.satSeen
	var unserved uint64
	w.Dropped, w.Queued, unserved = g.unserved(g.baseLoad, ld)
	if !g.countsUnserved() {
		return damaged
	}
	w.Unserved = unserved
	return damaged + w.Unserved
}

// countsUnserved reports whether unserved load enters the current window's
// fraction: in rate mode, with EvidenceUnserved, unless the host said it
// was saturated at a tick of the window (then it is the host's shortfall,
// not the target's).
func (g *Governor) countsUnserved() bool {
	if g.loadc == nil || g.limits.Mode != Rate || g.evidence&EvidenceUnserved == 0 {
		return false
	}
	return !g.satSeen || g.evidence&EvidenceGenerator == 0
}

// unserved returns the arrivals dropped and the growth of in flight between
// the reads from and to, and what of both is unserved load: the drops plus
// the growth beyond in flight's own jitter. In flight jitters by about
// offer × latency from one tick to the next (Little's law, at the low-load
// baseline), plus one: growth within that is noise, not a queue.
func (g *Governor) unserved(from, to load) (dropped uint64, queued int64, unserved uint64) {
	dropped = to.Dropped - from.Dropped
	queued = int64(to.inFlight()) - int64(from.inFlight())
	noise := 1 + int64(g.offer*g.baseline.Seconds())
	return dropped, queued, dropped + uint64(max(0, queued-noise))
}

// latencyRead is what the latency knee read of a window: the run's
// low-load baseline after it, and whether the knee holds the offer.
type latencyRead struct {
	baseline time.Duration
	// hold: in concurrency mode the cycle's inflation is past kneeNoise but
	// not kneeHold: the target is starting to queue (see judge).
	hold bool
}

// latency reads the latency knee of a judged window w on the tick's load
// ld and returns w with its latency fields filled and, when latency is
// damage, its fraction and By. It keeps the run's low-load baseline: the
// lowest mean latency of any judged window whose failures stayed at or
// below High (a quick window's latency counts: the climb from the floor is
// where the low-load latency is seen, and a queue it climbs into must stop
// it). Concurrency mode: see the constants above; rate mode: only a
// standing queue counts (EvidenceLatency).
func (g *Governor) latency(w Window, ld load) (Window, latencyRead) {
	r := latencyRead{baseline: g.baseline}
	resolved := w.OK + w.Failed
	if g.loadc == nil || resolved == 0 {
		return w, r
	}
	w.Latency = (ld.Latency - g.baseLoad.Latency) / time.Duration(resolved)
	if g.evidence&EvidenceLatency == 0 || w.Latency <= 0 {
		return w, r
	}
	if w.FailFrac <= g.limits.High && (r.baseline == 0 || w.Latency < r.baseline) {
		r.baseline = w.Latency
	}
	if r.baseline == 0 {
		return w, r
	}
	w.Baseline = r.baseline
	w.Inflation = float64(w.Latency) / float64(r.baseline)
	excess := w.Latency - r.baseline
	if g.limits.Mode == Rate && (excess < g.tick/standingQueueTicks || w.Inflation < standingQueueFactor ||
		float64(ld.inFlight()) < g.offer*excess.Seconds()/2) {
		// Rate mode: a queue that grows shows as unserved load; what latency
		// adds is the standing queue a back-off left behind, several-fold
		// deep. Less than standingQueueFactor × the baseline, or a delay
		// under a tenth of a tick, is the host's jitter at the governor's
		// time scale (a stalled generator delays attempts too; sub-millisecond
		// latencies inflate several-fold on a busy host), not a queue. So is
		// a delay the target's in flight does not show: a standing queue of
		// excess e at offer x holds about x·e attempts (Little's law), while
		// attempts a stalled host sent late were never in flight that long.
		return w, r
	}
	if g.limits.Mode == Rate {
		// A standing queue of excess e at offer x holds about x·e attempts
		// (Little's law) against the x·span the window offered: q =
		// e/(e + span) is the share of the load that only waits, capped at
		// the seed's smallest trim (standingQueueMax). 1 − 1/I, the closed
		// loop's share, is never less than 3/4 here (I >= 4) and would
		// quarter the offer for any standing queue, however shallow.
		span := w.End.Sub(w.Start)
		if w.Queued < 0 {
			return w, r // the queue is draining: this offer is below what the target serves
		}
		if q := min(excess.Seconds()/(excess+span).Seconds(), standingQueueMax); q > w.Frac {
			w.Frac, w.By = q, "latency"
		}
		return w, r
	}
	if excess <= LatencyFloor {
		return w, r // the host's jitter on a fast answer, not a queue
	}
	// The closed loop's cycle, by Little's law: offer in-flight iterations
	// resolving resolved attempts over the window's span turn around every
	// offer × span / resolved, response time plus think time. The share of
	// the cycle spent waiting, excess/cycle, is the share of the in-flight
	// iterations that only wait; without think time it is 1 − 1/Inflation.
	cycle := time.Duration(float64(w.End.Sub(w.Start)) * g.offer / float64(resolved))
	cycle = max(cycle, w.Latency)
	w.Waiting = float64(excess) / float64(cycle)
	// The cycle's inflation: the loop's cycle over the cycle without the
	// excess, which is the latency's own inflation without think time.
	switch inflation := 1 / (1 - w.Waiting); {
	case inflation > kneeHold:
		// Past the knee: the share of the in-flight iterations that only
		// wait is the window's damage, so the seed's back-off takes the
		// offer to about the knee.
		if q := 1 - 1/inflation; q > w.Frac {
			w.Frac, w.By = q, "latency"
		}
	case inflation > kneeNoise:
		r.hold = true
	}
	return w, r
}
