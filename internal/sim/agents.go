package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// WithAgents makes the run's attempts come from n generator agents (issue
// 27, internal/agent): the target serves the whole offer, split equally
// between the agents; each agent counts its attempts and sends what it
// counted once every `every` of simulated time (each agent at its own
// phase, drawn at random), and the controller's counters hold only what
// arrived. With probability late an agent's send arrives one send later,
// merged with the next (counts, not timestamps: nothing is lost). A single
// process is WithAgents' limit of no delay at all. It needs WithNoise (its
// random source) and a target that is not a LoadTarget (the started and
// latency evidence would have to travel with the deltas too).
func WithAgents(n int, late float64, every time.Duration) Option {
	return func(r *run) { r.agents = &agents{n: n, late: late, every: every} }
}

// agents is the run's agents' state.
type agents struct {
	n     int
	late  float64
	every time.Duration
	phase []time.Duration
	// pend* are counted and not yet sent; held* were sent late and arrive
	// with the agent's next send.
	pendOK, pendFail, heldOK, heldFail []uint64
	rot                                int // the agent that gets the next remainder
	rng                                *rand.Rand
	lateSends, sends                   int
}

func (a *agents) check() error {
	if a.n < 1 || a.late < 0 || a.late >= 1 || a.every <= 0 {
		return fmt.Errorf("sim: agents need n >= 1, late in [0, 1), every > 0; got %d, %v, %v", a.n, a.late, a.every)
	}
	return nil
}

func (a *agents) start(rng *rand.Rand) {
	a.rng = rng
	a.phase = make([]time.Duration, a.n)
	for i := range a.phase {
		a.phase[i] = time.Duration(rng.Int64N(int64(a.every)))
	}
	a.pendOK, a.pendFail = make([]uint64, a.n), make([]uint64, a.n)
	a.heldOK, a.heldFail = make([]uint64, a.n), make([]uint64, a.n)
}

// spread splits k attempts equally, the remainder going round.
func (a *agents) spread(k uint64, into []uint64) {
	n := uint64(a.n)
	for i := range into {
		into[i] += k / n
	}
	for range k % n {
		into[a.rot]++
		a.rot = (a.rot + 1) % a.n
	}
}

// step takes the attempts served during (at, at+step] and returns what
// arrives at the controller during it.
func (a *agents) step(at, step time.Duration, ok, failed uint64) (dok, dfail uint64) {
	a.spread(ok, a.pendOK)
	a.spread(failed, a.pendFail)
	end := at + step
	for i := range a.n {
		// The agent's latest send at or before end; it falls in this step
		// when it is after at.
		k := (end - a.phase[i]) / a.every
		if end < a.phase[i] || a.phase[i]+k*a.every <= at {
			continue
		}
		a.sends++
		// What was late arrives with this send.
		dok, dfail = dok+a.heldOK[i], dfail+a.heldFail[i]
		a.heldOK[i], a.heldFail[i] = 0, 0
		if a.rng.Float64() < a.late {
			a.lateSends++
			a.heldOK[i], a.heldFail[i] = a.pendOK[i], a.pendFail[i]
		} else {
			dok, dfail = dok+a.pendOK[i], dfail+a.pendFail[i]
		}
		a.pendOK[i], a.pendFail[i] = 0, 0
	}
	return dok, dfail
}
