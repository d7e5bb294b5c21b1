package phase

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// A loop host runs a phase's workers as event loops instead of one
// goroutine each (Config.NewLoop): the URL engine's epoll transport
// keeps every connection of a loop on one goroutine, so a request costs no
// goroutine park and wake. The phase stays the one runtime: the gate, the
// governor, the outage probes, the stop, the grace and the abort are the
// same; only the hand-off changes. Where a closed-loop goroutine worker
// blocks in gate.Acquire and then calls Iterate, a loop asks its Lane,
// without blocking, whether an iteration may begin (Begin) and says when
// it ended (End). In open loop the scheduler hands it arrivals instead
// (loopopen.go: Take, BeginDue, Free).
//
// Invariants (a Lane's methods but Wake are called from its loop's
// goroutine only):
//   - every iteration a loop runs is bracketed by one Begin that returned
//     true and one End with its Ticket: in between it holds a permit of
//     the concurrency gate and counts in flight, exactly as a goroutine
//     worker's iteration does;
//   - Begin returns false once the phase is stopping: no new iteration;
//     the loop lets those in flight finish, ends them, and returns from
//     Run when it holds none (or, once Hard is done, after cutting them
//     off: the host counts them aborted);
//   - a loop holds at most Want slots (workers): the phase's closed-loop
//     worker count, grown as the offer first reaches it (spawnTo), split
//     over the loops (worker g is loop g mod Loops's slot g div Loops);
//     Grew reports slots made, so Status.Workers and Result.Workers count
//     them as workers;
//   - slot i begins its first iteration no earlier than Due(i): the
//     governor's added workers start spread over one closed-loop cycle
//     (staggerSpan), as goroutine workers do; Due is on the phase's clock,
//     which is the real clock wherever a loop host runs;
//   - a slot Begin refused (the gate is full, an outage's probes are used
//     up) is tried again by the loop on its next wake; the phase calls
//     Wake when Want or the stop changes, and a loop holding refused slots
//     wakes at least every LoopRetry to try again (a permit freed by
//     another loop does not wake it).
type Loop interface {
	// Run runs the loop's slots until the phase stops and none is in
	// flight, or until Hard is done and those in flight are cut off.
	Run(l *Lane)
	// Close releases the loop's resources once Run returned.
	Close()
}

// LoopRetry is how often a loop holding slots Begin refused tries them
// again.
const LoopRetry = time.Millisecond

// Lane is one loop's handle on the phase.
type Lane struct {
	p    *Phase
	id   int
	made int // slots made (Grew), the loop's goroutine only

	mu   sync.Mutex
	wake func()      // set by the loop (OnWake); called by the phase
	open laneOpen    // the open loop's hand-over (loopopen.go)
	dead atomic.Bool // NewLoop failed: the scheduler hands it nothing
	busy laneBusy    // its wall and waiting time, for the watch (loopbusy.go)
}

// Ticket is one iteration begun on a Lane: its permit and start.
type Ticket struct {
	pm    gate.Permit
	began time.Time
}

// Open reports whether the phase is an open loop: its iterations come as
// arrivals (Take, BeginDue), not from Begin.
func (l *Lane) Open() bool { return l.p.cfg.Limits.Mode == governor.Rate }

// Want is how many slots the loop should hold now: its share of the
// phase's closed-loop workers, or in open loop the slots the scheduler
// asked it for.
func (l *Lane) Want() int {
	if l.Open() {
		return int(l.open.grown.Load())
	}
	n, k := int(l.p.loopTarget.Load()), l.p.cfg.Loops
	share := n / k
	if l.id < n%k {
		share++
	}
	return share
}

// Due is when slot i of the loop may begin its first iteration (zero:
// at once).
func (l *Lane) Due(i int) time.Time {
	g := i*l.p.cfg.Loops + l.id
	if starts := l.p.loopStarts.Load(); starts != nil && g < len(*starts) {
		return (*starts)[g]
	}
	return time.Time{}
}

// Grew records n more slots made by the loop (in open loop the scheduler
// counted them already).
func (l *Lane) Grew(n int) {
	l.made += n
	if l.Open() {
		return
	}
	for w := l.p.workers.Add(int64(n)); ; {
		if old := l.p.peak.Load(); w <= old || l.p.peak.CompareAndSwap(old, w) {
			break
		}
	}
}

// Begin reports whether one more iteration may begin now, and if so takes
// its permit and counts it in flight. It never blocks.
func (l *Lane) Begin() (Ticket, bool) {
	p := l.p
	select {
	case <-p.stop:
		return Ticket{}, false
	default:
	}
	if ok, _ := p.admit(); !ok {
		return Ticket{}, false
	}
	pm, ok := p.gate.TryAcquire()
	if !ok {
		return Ticket{}, false
	}
	p.inflight.Add(1)
	return Ticket{pm: pm, began: p.clk.Now()}, true
}

// End ends the iteration t began: its length feeds the stagger of new
// workers, it leaves the in-flight count and its permit is released.
func (l *Lane) End(t Ticket) {
	p := l.p
	p.iterNanos.Add(int64(p.clk.Now().Sub(t.began)))
	p.iterCount.Add(1)
	p.inflight.Add(-1)
	t.pm.Release()
}

// Stopping is closed when the phase stops starting iterations.
func (l *Lane) Stopping() <-chan struct{} { return l.p.stop }

// Hard is done when in-flight iterations are to be cut off.
func (l *Lane) Hard() context.Context { return l.p.hard }

// OnWake sets the function the phase calls, from any goroutine, when Want
// or the stop changed: it must wake the loop and return at once.
func (l *Lane) OnWake(f func()) {
	l.mu.Lock()
	l.wake = f
	l.mu.Unlock()
}

func (l *Lane) poke() {
	l.mu.Lock()
	f := l.wake
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// loops reports whether the phase runs its workers on the host's loops.
func (p *Phase) loops() bool { return p.cfg.NewLoop != nil }

// growLoops is spawnTo for a loop host: the loops' worker target becomes
// n (never past the ceiling, never down: a closed loop's workers beyond
// the offer wait at the gate), each new worker's first iteration due as
// spawnTo would start it (spread over span), the loops are started on the
// first call, and each is woken to make its share.
func (p *Phase) growLoops(n int, span time.Duration) {
	n = min(n, p.cfg.maxWorkers())
	if old := int(p.loopTarget.Load()); n > old {
		var starts []time.Time
		if s := p.loopStarts.Load(); s != nil {
			starts = append(starts, *s...)
		}
		now, add := p.clk.Now(), n-old
		for i := range add {
			starts = append(starts, now.Add(span*time.Duration(i)/time.Duration(add)))
		}
		p.loopStarts.Store(&starts)
		p.loopTarget.Store(int64(n))
	}
	if p.lanes == nil {
		for id := range p.cfg.Loops {
			p.startLoop(id)
		}
	}
	p.pokeLanes()
}

// startLoop makes loop id on its own goroutine and runs it.
func (p *Phase) startLoop(id int) {
	l := &Lane{p: p, id: id}
	p.lanes = append(p.lanes, l)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		lp, err := p.cfg.NewLoop(id)
		if err != nil {
			l.dead.Store(true)
			if p.cfg.WorkerFailed != nil {
				p.cfg.WorkerFailed(err)
			}
			return
		}
		defer lp.Close()
		if p.hard.Err() == nil {
			l.busy.begin(p.clk.Now())
			lp.Run(l)
			l.busy.finish(p.clk.Now())
		}
	}()
}

// pokeLanes wakes every loop: Want or the stop changed.
func (p *Phase) pokeLanes() {
	for _, l := range p.lanes {
		l.poke()
	}
}

// checkLoops is withDefaults' check of a loop host's configuration.
func (c *Config) checkLoops() string {
	if c.NewLoop == nil {
		return ""
	}
	if c.Iterations != nil || c.RampDownGrace != 0 {
		return "event loops run no fixed iterations and no ramp-down grace"
	}
	if c.Loops <= 0 {
		c.Loops = 1
	}
	if c.Limits.Mode == governor.Concurrency {
		c.Loops = min(c.Loops, max(int(math.Ceil(c.Limits.Ceiling)), 1))
	}
	return ""
}
