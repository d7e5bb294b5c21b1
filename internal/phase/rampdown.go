package phase

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Interrupter is a Worker whose iteration in flight can be cut off on its
// own, the phase running on (a script VU removed by a ramp down whose
// grace ran out: k6's gracefulRampDown).
type Interrupter interface {
	// Interrupt cuts off the worker's iteration in flight, if any; the
	// worker stays usable for its next iteration. It is called from
	// another goroutine than the worker's and must return quickly.
	Interrupt()
}

// rampDown lets the closed-loop workers a falling authored schedule
// removes finish their iteration in flight within a grace, then cuts that
// iteration off (k6's ramping-vus gracefulRampDown). The ramp calls trim
// at every RampStep with the authored count; the workers above it that
// are in flight, latest joined first, are marked and cut off once their
// grace has run out. A schedule that rises again unmarks them. While the
// authored count is 0 no iteration starts.
type rampDown struct {
	grace time.Duration // < 0: cut off at once

	mu      sync.Mutex
	members []*member     // in the order they joined
	zero    chan struct{} // non-nil while the authored count is 0; closed when it rises
	last    time.Time     // the last trim's instant (tests wait on it)
}

// member is one closed-loop worker as the ramp down sees it.
type member struct {
	w    Interrupter // nil: the worker cannot be cut off on its own
	busy bool        // an iteration is in flight
	due  time.Time   // marked: when its iteration is cut off; zero: not marked
	cut  bool        // Interrupt was called for the iteration in flight
}

func newRampDown(grace time.Duration) *rampDown { return &rampDown{grace: grace} }

// join registers a closed-loop worker.
func (r *rampDown) join(w Worker) *member {
	m := &member{}
	m.w, _ = w.(Interrupter)
	r.mu.Lock()
	r.members = append(r.members, m)
	r.mu.Unlock()
	return m
}

// leave unregisters a worker that ended.
func (r *rampDown) leave(m *member) {
	r.mu.Lock()
	r.members = slices.DeleteFunc(r.members, func(x *member) bool { return x == m })
	r.mu.Unlock()
}

// begin marks m's iteration in flight; end marks it done, with its mark.
func (r *rampDown) begin(m *member) {
	r.mu.Lock()
	m.busy = true
	r.mu.Unlock()
}

func (r *rampDown) end(m *member) {
	r.mu.Lock()
	m.busy, m.due, m.cut = false, time.Time{}, false
	r.mu.Unlock()
}

// idle returns a channel that is closed when the authored count rises
// above 0, or nil when it is not 0.
func (r *rampDown) idle() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.zero
}

// trim applies the authored count n at now: the iterations in flight
// beyond n are marked (the latest joined workers' first) and those whose
// grace has run out are cut off.
func (r *rampDown) trim(n int, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = now
	switch {
	case n <= 0 && r.zero == nil:
		r.zero = make(chan struct{})
	case n > 0 && r.zero != nil:
		close(r.zero)
		r.zero = nil
	}
	busy, marked := 0, 0
	for _, m := range r.members {
		if m.busy {
			busy++
			if !m.due.IsZero() {
				marked++
			}
		}
	}
	excess := max(busy-n, 0)
	// A schedule that rose again keeps the earliest marked workers'
	// iterations (those not cut off yet).
	for i := 0; i < len(r.members) && marked > excess; i++ {
		if m := r.members[i]; m.busy && !m.due.IsZero() && !m.cut {
			m.due = time.Time{}
			marked--
		}
	}
	due := now
	if r.grace > 0 {
		due = now.Add(r.grace)
	}
	for i := len(r.members) - 1; i >= 0 && marked < excess; i-- {
		if m := r.members[i]; m.busy && m.due.IsZero() {
			m.due = due
			marked++
		}
	}
	for _, m := range r.members {
		if m.busy && !m.cut && !m.due.IsZero() && !now.Before(m.due) && m.w != nil {
			m.cut = true
			m.w.Interrupt()
		}
	}
}

// authoredCount is the authored worker count at elapsed for the ramp
// down: the schedule's value, rounded down as the gate rounds an offer,
// and never past the ceiling. Unlike authored it may be 0.
func (p *Phase) authoredCount(elapsed time.Duration) int {
	c := math.Min(p.cfg.Ceiling(elapsed), p.cfg.Limits.Ceiling)
	return int(math.Max(math.Floor(c), 0))
}
