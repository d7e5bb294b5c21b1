package agent

import (
	"sync"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
)

// merged are the run's cumulative counters: the sum of every delta every
// agent sent. The controller's governor reads them as one process's
// (governor.LoadCounters).
type merged struct {
	mu                                                             sync.Mutex
	classes                                                        [engine.NumClasses]uint64
	started, iterOK, iterFailed, dropped, missed, aborted, unreach uint64
	latency                                                        time.Duration
	// read is the agents' read delay: sums and answers added, the
	// longest the largest of any agent's.
	read engine.ReadDelay
	// saturated says whether any agent that runs said so at its last tick.
	saturated func() bool
}

var _ governor.LoadCounters = (*merged)(nil)

// add folds one delta in.
func (m *merged) add(d *Delta) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, n := range d.Classes {
		if i < len(m.classes) {
			m.classes[i] += n
		}
	}
	m.started += d.Started
	m.iterOK += d.IterOK
	m.iterFailed += d.IterFailed
	m.dropped += d.Dropped
	m.missed += d.Missed
	m.aborted += d.Aborted
	m.unreach += d.Unreachable
	m.latency += d.Latency
	m.read.Sum += d.ReadDelay
	m.read.N += d.ReadAnswers
	m.read.Max = max(m.read.Max, d.ReadMax)
}

// Attempts implements governor.Counters.
func (m *merged) Attempts() (ok, failed uint64) {
	c := m.Counts()
	return c.OK, c.Failed
}

// Load implements governor.LoadCounters. An agent reads its attempts before
// what it started, so a merged Started is never below the merged resolved.
func (m *merged) Load() governor.Load {
	m.mu.Lock()
	l := governor.Load{Started: m.started, Dropped: m.dropped, Latency: m.latency, Unreachable: m.unreach}
	m.mu.Unlock()
	if m.saturated != nil {
		l.GeneratorSaturated = m.saturated()
	}
	return l
}

// Counts are the merged counters as one phase's.
func (m *merged) Counts() engine.Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := engine.Counts{Classes: m.classes, IterOK: m.iterOK, IterFailed: m.iterFailed, Dropped: m.dropped,
		Missed: m.missed, Aborted: m.aborted, Started: m.started, ReadDelay: m.read}
	for i, n := range m.classes {
		if engine.Class(i) == engine.ClassOK {
			c.OK += n
		} else {
			c.Failed += n
		}
	}
	return c
}

// deltaOf is what an agent's counters moved by since prev.
func deltaOf(now, prev engine.Counts, nowL, prevL governor.Load) Delta {
	d := Delta{Classes: make([]uint64, engine.NumClasses), Started: now.Started - prev.Started,
		IterOK: now.IterOK - prev.IterOK, IterFailed: now.IterFailed - prev.IterFailed, Dropped: now.Dropped - prev.Dropped,
		Missed:  now.Missed - prev.Missed,
		Aborted: now.Aborted - prev.Aborted, Unreachable: nowL.Unreachable - prevL.Unreachable, Latency: nowL.Latency - prevL.Latency,
		ReadDelay: now.ReadDelay.Sum - prev.ReadDelay.Sum, ReadAnswers: now.ReadDelay.N - prev.ReadDelay.N, ReadMax: now.ReadDelay.Max}
	for i := range d.Classes {
		d.Classes[i] = now.Classes[i] - prev.Classes[i]
	}
	return d
}
