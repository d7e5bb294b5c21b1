package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// LimitedLoopSpec describes a closed loop with think time against a
// token-bucket limiter with a burst allowance: nginx's limit_req with
// burst=Burst nodelay, answering the excess with a 503 at once. Unlike
// ClosedLoop's fluid model it follows when each VU sends: a limiter with a
// burst allowance answers a smooth excess with nothing but 200s until the
// allowance is spent (Burst / (x − Rate) seconds at x requests a second),
// and a cohort of VUs that send at one instant overflows it at once, so the
// phases of the VUs decide what a window sees.
type LimitedLoopSpec struct {
	// Think is each iteration's think time after its request (> 0).
	Think time.Duration
	// Response is the response time, ok or refused (> 0; the limiter answers
	// at once, so it does not grow with the load).
	Response time.Duration
	// Jitter spreads each step's mean response time uniformly over
	// Response ± Jitter (noise, not a queue). It must be below Response.
	Jitter time.Duration
	// Rate is the limiter's rate, requests a second (> 0).
	Rate float64
	// Burst is the limiter's burst allowance in requests (>= 0): the excess
	// over Rate it lets through before it refuses.
	Burst float64
	// Stagger is the longest span the VUs the governor adds start over, as
	// internal/phase spreads them (its staggerSpan: the loop's cycle, at
	// most half the governor's Shortest window). The VUs of the first offer
	// start at once: no iteration has ended yet. 0 starts every VU at once.
	Stagger time.Duration
}

// Validate reports the first field that is wrong.
func (s LimitedLoopSpec) Validate() error {
	if err := validateLoop("limited loop", s.Think, s.Response, s.Jitter, s.Rate); err != nil {
		return err
	}
	switch {
	case !(s.Burst >= 0) || math.IsInf(s.Burst, 0):
		return fmt.Errorf("sim: limited loop burst must be a finite number >= 0, got %v", s.Burst)
	case s.Stagger < 0:
		return fmt.Errorf("sim: limited loop stagger must be >= 0, got %v", s.Stagger)
	}
	return nil
}

// Capacity is the most VUs the limiter serves without refusing once its
// burst allowance is spent: Rate × (Response + Think), by Little's law.
func (s LimitedLoopSpec) Capacity() float64 { return s.Rate * (s.Response + s.Think).Seconds() }

// limitedBins is how many phase bins a loop's cycle is cut into: a
// millisecond at a second of think time, fine against a governor's read.
const limitedBins = 1000

// LimitedLoop returns a fresh limited-loop target for spec, and panics if
// spec is invalid. It is a LoadTarget (the requests' summed response time).
//
// The model follows the VUs' phases: the cycle (Response + Think) is cut
// into limitedBins bins, each holding the VUs that send when the run's
// clock passes it. A rising offer first lets in the VUs an earlier fall
// parked (they wait at the gate, so they send at once), then makes new
// ones spread over min(cycle, Stagger); a falling offer parks the VUs next
// due to send (a VU releases its permit at the end of its think time and
// finds the gate full). The limiter is nginx's: its excess decays at Rate
// and a request that would take it past Burst is refused without changing
// it.
func LimitedLoop(spec LimitedLoopSpec) *LimitedLoopTarget {
	if err := spec.Validate(); err != nil {
		panic(err)
	}
	cycle := (spec.Response + spec.Think).Seconds()
	return &LimitedLoopTarget{spec: spec, cycle: cycle, width: cycle / limitedBins, vus: make([]float64, limitedBins)}
}

// LimitedLoopTarget is a LimitedLoop model in a run; each run needs a fresh
// one.
type LimitedLoopTarget struct {
	spec    LimitedLoopSpec
	cycle   float64   // seconds
	width   float64   // seconds a bin spans
	vus     []float64 // VUs by the bin of the cycle they send in
	active  float64   // sum of vus
	parked  float64   // VUs made but held at the gate
	next    int64     // the next bin to send, counted from the run's start
	excess  float64   // the limiter's excess, requests
	sent    float64   // requests resolved so far
	latency float64   // seconds, summed over resolved requests
}

// Load returns the cumulative evidence so far; see LoadTarget.
func (l *LimitedLoopTarget) Load() governor.Load {
	return governor.Load{Started: whole(l.sent), Latency: time.Duration(l.latency * float64(time.Second))}
}

// Serve runs the model over one step at n VUs; see Target.
func (l *LimitedLoopTarget) Serve(at time.Duration, n float64, step time.Duration, rng *rand.Rand) (ok, failed float64) {
	l.resize(n, at)
	r := l.spec.Response.Seconds()
	if l.spec.Jitter > 0 {
		r += l.spec.Jitter.Seconds() * (2*rng.Float64() - 1)
	}
	end := (at + step).Seconds()
	for float64(l.next)*l.width < end {
		a := l.vus[l.next%limitedBins]
		l.excess = math.Max(0, l.excess-l.spec.Rate*l.width)
		if a > 0 {
			// nginx admits a request while its excess stays within the burst.
			admit := math.Min(a, math.Max(0, l.spec.Burst+1-l.excess))
			l.excess += admit
			ok += admit
			failed += a - admit
		}
		l.next++
	}
	l.sent += ok + failed
	l.latency += (ok + failed) * r
	return ok, failed
}

// resize brings the VUs that send to n at the run's time at.
func (l *LimitedLoopTarget) resize(n float64, at time.Duration) {
	switch d := n - l.active; {
	case d > 0:
		back := math.Min(d, l.parked)
		l.parked -= back
		l.vus[l.next%limitedBins] += back
		l.spread(d-back, at)
	case d < 0:
		// The VUs next due to send park first.
		left := -d
		for i := int64(0); i < limitedBins && left > 0; i++ {
			b := (l.next + i) % limitedBins
			take := math.Min(left, l.vus[b])
			l.vus[b] -= take
			left -= take
		}
		l.parked += -d - left
	}
	l.active = 0
	for _, v := range l.vus {
		l.active += v
	}
}

// spread adds k new VUs starting over min(cycle, Stagger) from the next
// bin; at once before the first cycle has passed (no iteration has ended).
func (l *LimitedLoopTarget) spread(k float64, at time.Duration) {
	if k <= 0 {
		return
	}
	span := math.Min(l.cycle, l.spec.Stagger.Seconds())
	if at.Seconds() < l.cycle {
		span = 0
	}
	bins := max(1, int64(math.Round(span/l.width)))
	for i := int64(0); i < bins; i++ {
		l.vus[(l.next+i)%limitedBins] += k / float64(bins)
	}
}
