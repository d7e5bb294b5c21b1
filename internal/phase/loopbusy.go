package phase

import (
	"sync"
	"time"
)

// laneBusy is how a loop spent its wall time: the generator's watch reads
// it to tell a loop that is the bottleneck (it never waits: every turn
// finds work ready, so an answer the target sent sits unread and its slot
// stays taken) from a loop whose slots are taken by a slow target (it
// waits for the target's answers most of the time). Invariants: the wall
// time runs from start to end (or to now while the loop runs), the idle
// time is the part of it the loop spent waiting (Lane.Sleeping true to
// false), a wait under way included up to now; both readings only grow.
type laneBusy struct {
	mu         sync.Mutex
	start, end time.Time // end zero: the loop runs
	idle       time.Duration
	since      time.Time // the wait under way began; zero: none
}

// begin marks the loop running from now.
func (b *laneBusy) begin(now time.Time) {
	b.mu.Lock()
	b.start = now
	b.mu.Unlock()
}

// finish marks the loop ended at now: its wall time stops growing.
func (b *laneBusy) finish(now time.Time) {
	b.mu.Lock()
	b.wait(false, now)
	if !b.start.IsZero() {
		b.end = now
	}
	b.mu.Unlock()
}

// wait notes the loop starting (true) or ending (false) a wait at now;
// b.mu is held.
func (b *laneBusy) wait(s bool, now time.Time) {
	switch {
	case s && b.since.IsZero():
		b.since = now
	case !s && !b.since.IsZero():
		b.idle += now.Sub(b.since)
		b.since = time.Time{}
	}
}

// read returns the loop's wall and idle time up to now (zero for a loop
// not started).
func (b *laneBusy) read(now time.Time) (wall, idle time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		return 0, 0
	}
	until := now
	if !b.end.IsZero() {
		until = b.end
	}
	idle = b.idle
	if !b.since.IsZero() {
		idle += max(now.Sub(b.since), 0)
	}
	return max(until.Sub(b.start), 0), idle
}

// loopTime sums the loops' wall and idle time up to now.
func (p *Phase) loopTime(now time.Time) (wall, idle time.Duration) {
	p.workersMu.Lock()
	lanes := p.lanes
	p.workersMu.Unlock()
	for _, l := range lanes {
		w, i := l.busy.read(now)
		wall += w
		idle += i
	}
	return wall, idle
}
