package phase

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// laneBusy is how a loop spent its wall time: the generator's watch reads
// it to tell a loop that is the bottleneck (it never waits for the
// target: every turn finds work ready, so an answer the target sent sits
// unread and its slot stays taken) from a loop whose slots are taken by a
// slow target (it waits for the target's answers most of the time).
//
// The wall time runs from start to end (or to now while the loop runs).
// Its idle part is, for a loop that runs on one OS thread and said which
// (Lane.Thread), the wall time minus the thread's demand for CPU (the
// kernel's schedstat: time on a CPU plus time runnable on a run queue):
// on a shared machine a loop starved of CPU by other processes is the
// bottleneck as surely as one that uses a whole core, and the time it
// waits to run after its answers came in is not the target's. Otherwise
// the idle part is the time between Lane.Sleeping(true) and (false), a
// wait under way included up to now — which also counts the time the
// loop waited to run after it woke.
type laneBusy struct {
	mu         sync.Mutex
	start, end time.Time // end zero: the loop runs
	idle       time.Duration
	since      time.Time // the wait under way began; zero: none
	tid        int       // the loop's OS thread; 0: unknown
	demand0    int64     // the thread's demand at start (ns)
	demandEnd  int64     // the thread's demand at end (ns)
}

// begin marks the loop running from now.
func (b *laneBusy) begin(now time.Time) {
	b.mu.Lock()
	b.start = now
	b.mu.Unlock()
}

// thread notes that the loop runs on OS thread tid from now on: its wall
// time starts again at now, its demand from what the thread's is now. A
// thread whose demand cannot be read is not noted.
func (b *laneBusy) thread(tid int, now time.Time) {
	d, ok := threadDemand(tid)
	if !ok {
		return
	}
	b.mu.Lock()
	b.tid, b.demand0, b.start = tid, d, now
	b.mu.Unlock()
}

// finish marks the loop ended at now: its wall time stops growing.
func (b *laneBusy) finish(now time.Time) {
	var d int64
	ok := false
	if tid := b.threadID(); tid != 0 {
		d, ok = threadDemand(tid)
	}
	b.mu.Lock()
	if b.tid != 0 {
		if !ok {
			d = b.demand0
		}
		b.demandEnd = d
	}
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

func (b *laneBusy) threadID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tid
}

// read returns the loop's wall and idle time up to now (zero for a loop
// not started).
func (b *laneBusy) read(now time.Time) (wall, idle time.Duration) {
	var d int64
	ok := false
	if tid := b.threadID(); tid != 0 {
		d, ok = threadDemand(tid)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		return 0, 0
	}
	until := now
	if !b.end.IsZero() {
		until = b.end
	}
	wall = max(until.Sub(b.start), 0)
	if b.tid != 0 {
		if !b.end.IsZero() {
			d, ok = b.demandEnd, true
		}
		if ok {
			return wall, max(wall-time.Duration(d-b.demand0), 0)
		}
	}
	idle = b.idle
	if !b.since.IsZero() {
		idle += max(now.Sub(b.since), 0)
	}
	return wall, idle
}

// parseSchedstat reads a schedstat line ("on-CPU ns, run-queue ns,
// slices"): the sum of the first two.
func parseSchedstat(b []byte) (int64, bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || run < 0 || wait < 0 {
		return 0, false
	}
	return run + wait, true
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
