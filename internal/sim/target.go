package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Target is a model of a system under test.
//
// Serve is called once per simulation step, in time order, with the time at
// which the step begins (measured from the start of the run), the offer in
// force during the step (attempts per second) and the step's length. It
// returns how many attempts resolved during the step as ok and as failed.
// The counts are expected values and may be fractional; the run turns them
// into whole attempts (see WithNoise). rng is the run's random source, for
// models with randomness of their own; it is never nil.
//
// A Target may keep state between steps (a queue does), so each run needs a
// fresh one.
type Target interface {
	Serve(at time.Duration, offer float64, step time.Duration, rng *rand.Rand) (ok, failed float64)
}

// TargetFunc adapts a stateless function to Target.
type TargetFunc func(at time.Duration, offer float64, step time.Duration, rng *rand.Rand) (ok, failed float64)

// Serve calls f.
func (f TargetFunc) Serve(at time.Duration, offer float64, step time.Duration, rng *rand.Rand) (ok, failed float64) {
	return f(at, offer, step, rng)
}

// Robust returns a target that serves every attempt, at any offer.
func Robust() Target {
	return TargetFunc(func(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
		return x * step.Seconds(), 0
	})
}

// Shed returns the soft-shedding model of docs/design.md §5: up to capacity c
// every attempt succeeds; above it the target serves c per second and sheds
// the rest, so the failure fraction at offer x is (x − c) / x.
func Shed(c float64) Target {
	return TargetFunc(func(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
		s := step.Seconds()
		if x <= c {
			return x * s, 0
		}
		return c * s, (x - c) * s
	})
}

// Collapse returns the collapse model of docs/design.md §5: up to capacity c every
// attempt succeeds; at offer x above c goodput falls, only
// c·(1 − (x − c)/(2c)) attempts per second succeed (never fewer than none)
// and the rest fail. At 3c and beyond nothing succeeds.
func Collapse(c float64) Target {
	return TargetFunc(func(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
		s := step.Seconds()
		if x <= c {
			return x * s, 0
		}
		good := math.Max(0, c*(1-(x-c)/(2*c)))
		return good * s, (x - good) * s
	})
}

// Queue returns a queueing model with timeouts: a first-in-first-out server
// that completes c attempts per second, and clients that give up on an
// attempt that has waited longer than timeout. Below c the queue stays empty
// and every attempt succeeds; above c the queue (and so latency) grows by
// x − c per second without a single failure until waits reach the timeout,
// then the excess times out and the failure fraction tends to (x − c)/x.
// After an overload the queue drains only when the offer drops below c.
// Attempts still waiting are in flight, not resolved. The model is a fluid
// one: it tracks the queue as a quantity, not attempt by attempt.
func Queue(c float64, timeout time.Duration) Target {
	return &queue{c: c, limit: c * timeout.Seconds()}
}

type queue struct {
	c       float64 // attempts completed per second
	limit   float64 // the longest queue whose tail is served before it times out
	q       float64 // attempts waiting
	started float64 // attempts sent so far (the waiting ones are in flight)
}

// Load makes the queue a LoadTarget: what it has been sent, so a governor
// reading governor.Load sees the queue as in-flight growth. It records no
// latency (the fluid model does not follow attempts) and drops nothing.
func (m *queue) Load() governor.Load { return governor.Load{Started: whole(m.started)} }

func (m *queue) Serve(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
	s := step.Seconds()
	m.started += x * s
	total := m.q + x*s
	served := math.Min(total, m.c*s)
	m.q = total - served
	var timedOut float64
	if m.q > m.limit {
		timedOut = m.q - m.limit
		m.q = m.limit
	}
	return served, timedOut
}

// Switch returns a target that behaves as before until at (measured from
// the start of the run) and as after from then on: Switch(Shed(c), Shed(2*c),
// at) is a capacity that doubles mid-run. A step that straddles at is served
// by before for its first part and by after for the rest.
func Switch(before, after Target, at time.Duration) Target {
	return TargetFunc(func(t time.Duration, x float64, step time.Duration, rng *rand.Rand) (float64, float64) {
		switch {
		case t+step <= at:
			return before.Serve(t, x, step, rng)
		case t >= at:
			return after.Serve(t, x, step, rng)
		}
		ok1, f1 := before.Serve(t, x, at-t, rng)
		ok2, f2 := after.Serve(at, x, t+step-at, rng)
		return ok1 + ok2, f1 + f2
	})
}

// Noisy returns t with a background failure fraction b on every attempt it
// would have served: a target whose failures never fall to zero. With b
// below the governor's low bound a window at a healthy offer is still clean.
func Noisy(t Target, b float64) Target {
	return TargetFunc(func(at time.Duration, x float64, step time.Duration, rng *rand.Rand) (float64, float64) {
		ok, failed := t.Serve(at, x, step, rng)
		return ok * (1 - b), failed + ok*b
	})
}

// Dead returns t, except that from from until until (measured from the start
// of the run) every attempt fails: a target that dies and then recovers. t is
// not called during the dead span, so a stateful t resumes where it was.
func Dead(t Target, from, until time.Duration) Target {
	dead := TargetFunc(func(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
		return 0, x * step.Seconds()
	})
	return Switch(Switch(t, dead, from), t, until)
}
