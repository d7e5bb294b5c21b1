package phase

import (
	"context"
	"sync/atomic"
	"time"
)

// The open loop on a loop host (loop.go): the scheduler takes each
// admission from the rate gate as schedule does and hands its due instant
// to a loop instead of a goroutine worker. Invariants, the same accounting
// as schedule's (arrivals = started + dropped + missed):
//   - an arrival goes to a loop with a slot it reported free (Free), that
//     slot reserved by a compare-and-swap; with none free and fewer than
//     MaxWorkers workers, to the loop with the fewest, which makes one
//     more slot for it (Want grows by one); else it is dropped;
//   - the loop takes its arrivals (Take) and begins each at once
//     (BeginDue), which counts its schedule lag; an arrival taken once the
//     phase is stopping is dropped, never started;
//   - a loop is woken (OnWake) for an arrival only while it waits
//     (Sleeping), so a busy loop costs the scheduler no system call.
//
// Open-loop slots on a loop host do not retire (pool.go): a slot is a few
// words, not a goroutine; the URL engine's loop closes the connection of a
// slot left unused (engine's openIdleClose).
type laneOpen struct {
	free     atomic.Int64 // slots the loop reported free and no arrival took
	grown    atomic.Int64 // slots the scheduler asked for (Want, open loop)
	sleeping atomic.Bool
	queued   []time.Time // due instants handed over, under Lane.mu
	spare    []time.Time
}

// Free reports one of the loop's slots free for an arrival.
func (l *Lane) Free() { l.open.free.Add(1) }

// Sleeping says whether the loop is about to wait (true) or awake again
// (false). A loop that set it must look at Pending before it waits. The
// time between the two is the loop's idle time, which the generator's
// watch reads (loopbusy.go): an open loop calls Sleeping around every wait.
func (l *Lane) Sleeping(s bool) {
	l.open.sleeping.Store(s)
	now := l.p.clk.Now()
	l.busy.mu.Lock()
	l.busy.wait(s, now)
	l.busy.mu.Unlock()
}

// Pending reports whether arrivals wait to be taken.
func (l *Lane) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open.queued) > 0
}

// Take returns the due instants handed to the loop since the last Take;
// the slice is the loop's until the next Take.
func (l *Lane) Take() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.open.queued
	l.open.queued, l.open.spare = l.open.spare[:0], q
	return q
}

// BeginDue begins an iteration for an arrival due at due, counting it in
// flight and its schedule lag; a stopping phase drops it (false).
func (l *Lane) BeginDue(due time.Time) (Ticket, bool) {
	p := l.p
	select {
	case <-p.stop:
		p.drop()
		return Ticket{}, false
	default:
	}
	p.inflight.Add(1)
	now := p.clk.Now()
	p.cfg.Counters.Lag(now.Sub(due))
	return Ticket{began: now}, true
}

// Drop counts an arrival handed to the loop that it will not start (the
// phase aborted before it began) as dropped.
func (l *Lane) Drop() { l.p.drop() }

// hand gives the arrival due to l and wakes it if it waits.
func (l *Lane) hand(due time.Time) {
	l.mu.Lock()
	l.open.queued = append(l.open.queued, due)
	wake := l.wake
	l.mu.Unlock()
	if l.open.sleeping.Load() && wake != nil {
		wake()
	}
}

// scheduleLoops is schedule for a loop host.
func (p *Phase) scheduleLoops(ctx context.Context) {
	p.workersMu.Lock()
	for id := range p.cfg.Loops {
		p.startLoop(id)
	}
	p.workersMu.Unlock()
	next := 0
	for {
		due, ok := p.nextArrival(ctx)
		if !ok {
			return
		}
		if l := p.freeLane(&next); l != nil {
			l.hand(due)
			continue
		}
		if l := p.smallestLane(); l != nil && int(p.workers.Load()) < p.cfg.MaxWorkers {
			l.open.grown.Add(1)
			p.noteWorker()
			l.hand(due)
			continue
		}
		p.drop()
	}
}

// freeLane takes a free slot of some loop, round-robin from *next; nil
// when none is free.
func (p *Phase) freeLane(next *int) *Lane {
	k := len(p.lanes)
	for i := range k {
		l := p.lanes[(*next+i)%k]
		for {
			n := l.open.free.Load()
			if n <= 0 {
				break
			}
			if l.open.free.CompareAndSwap(n, n-1) {
				*next = (*next + i + 1) % k
				return l
			}
		}
	}
	return nil
}

// smallestLane is the running loop with the fewest slots asked for; nil
// when no loop runs (every NewLoop failed).
func (p *Phase) smallestLane() *Lane {
	var best *Lane
	for _, l := range p.lanes {
		if !l.dead.Load() && (best == nil || l.open.grown.Load() < best.open.grown.Load()) {
			best = l
		}
	}
	return best
}

// noteWorker counts one more worker made, and the peak.
func (p *Phase) noteWorker() {
	for n := p.workers.Add(1); ; {
		if old := p.peak.Load(); n <= old || p.peak.CompareAndSwap(old, n) {
			return
		}
	}
}
