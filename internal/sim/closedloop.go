package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// ClosedLoopSpec describes a closed loop with think time, the shape of most
// k6 scripts (a VU executor, each iteration one request then sleep(Think)),
// against a server that serves Rate requests a second. The offer is the
// number of VUs (concurrency mode): N VUs send about N/(R + Think) requests
// a second, R the response time, so the attempts a window gathers depend on
// the think time, not only on the offer.
type ClosedLoopSpec struct {
	// Think is each iteration's think time after its request (> 0).
	Think time.Duration
	// Response is the unloaded response time (> 0).
	Response time.Duration
	// Jitter spreads each step's mean response time uniformly over
	// Response ± Jitter: a busy host's noise on a fast answer, not a queue.
	// It must be below Response.
	Jitter time.Duration
	// Rate is the requests per second the server serves (> 0).
	Rate float64
	// Queues says what the server does with the excess: false refuses it at
	// once (nginx limit_req answering 503: a shedding target, fast
	// failures), true makes it wait (a thread pool with a deep backlog:
	// nothing fails, the response time grows to N/Rate − Think).
	Queues bool
}

// Validate reports the first field that is wrong.
func (s ClosedLoopSpec) Validate() error {
	return validateLoop("closed loop", s.Think, s.Response, s.Jitter, s.Rate)
}

// validateLoop checks what every loop model shares: think and response
// times, the response's jitter and the server's rate; kind names the model
// in the error.
func validateLoop(kind string, think, response, jitter time.Duration, rate float64) error {
	switch {
	case think <= 0:
		return fmt.Errorf("sim: %s think time must be > 0, got %v", kind, think)
	case response <= 0:
		return fmt.Errorf("sim: %s response time must be > 0, got %v", kind, response)
	case jitter < 0 || jitter >= response:
		return fmt.Errorf("sim: %s jitter must be in [0, response time %v), got %v", kind, response, jitter)
	case !(rate > 0) || math.IsInf(rate, 0):
		return fmt.Errorf("sim: %s rate must be a finite number > 0, got %v", kind, rate)
	}
	return nil
}

// Capacity is the most VUs the server serves without damage:
// Rate × (Response + Think), by Little's law. Beyond it a shedding server
// fails (N/(R+Z) − Rate)/(N/(R+Z)) of the requests and a queueing one makes
// them wait.
func (s ClosedLoopSpec) Capacity() float64 { return s.Rate * (s.Response + s.Think).Seconds() }

// ClosedLoop returns a fresh closed-loop target for spec, and panics if spec
// is invalid (the specs are the program's own). It is a LoadTarget: a
// governor reads the requests' summed response time (never the think time)
// and what is in flight.
//
// The model is a fluid one, in steady state at every step: N VUs at
// response time R send N/(R + Think) requests a second. A shedding server
// serves Rate of them, at the unloaded response time, and refuses the rest
// as fast; a queueing one serves min(N/(R0 + Think), Rate) a second and the
// response time is N/throughput − Think (the asymptotic bound of a closed
// network with one station), never below R0.
func ClosedLoop(spec ClosedLoopSpec) *ClosedLoopTarget {
	if err := spec.Validate(); err != nil {
		panic(err)
	}
	return &ClosedLoopTarget{spec: spec}
}

// ClosedLoopTarget is a ClosedLoop model in a run; each run needs a fresh one.
type ClosedLoopTarget struct {
	spec     ClosedLoopSpec
	resolved float64 // requests answered so far, ok or failed
	inFlight float64 // requests in flight at the end of the last step
	latency  float64 // seconds, summed over answered requests
}

// Load returns the cumulative evidence so far; see LoadTarget.
func (c *ClosedLoopTarget) Load() governor.Load {
	r := whole(c.resolved)
	return governor.Load{Started: r + whole(c.inFlight), Latency: time.Duration(c.latency * float64(time.Second))}
}

// Serve runs the model over one step at n VUs; see Target.
func (c *ClosedLoopTarget) Serve(_ time.Duration, n float64, step time.Duration, rng *rand.Rand) (ok, failed float64) {
	s, z := step.Seconds(), c.spec.Think.Seconds()
	r0 := c.spec.Response.Seconds()
	if c.spec.Jitter > 0 {
		r0 += c.spec.Jitter.Seconds() * (2*rng.Float64() - 1)
	}
	sent := n / (r0 + z) // requests a second
	r := r0
	switch {
	case sent <= c.spec.Rate:
		ok = sent * s
	case c.spec.Queues:
		ok = c.spec.Rate * s
		r = n/c.spec.Rate - z
	default:
		ok, failed = c.spec.Rate*s, (sent-c.spec.Rate)*s
	}
	c.resolved += ok + failed
	c.latency += (ok + failed) * r
	c.inFlight = n * r / (r + z)
	return ok, failed
}
