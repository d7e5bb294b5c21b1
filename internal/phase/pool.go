package phase

import (
	"sync"

	"github.com/throttlekit/throttle/governor"
)

// The open loop's pool follows the need. It grows when an arrival finds no
// idle worker (schedule), and without retirement it would never shrink: on
// a long run each latency stall adds workers, each keeping its connection's
// buffers (or a script VU's runtime), long after the stall is over — the
// soak benchmark's resident memory grew 27 % after its warm-up with the
// default bound of 1000 workers. So at every tick of the generator's watch
// the phase counts its idle workers (made, minus the iterations in flight);
// when at least one stayed idle at each of the last RetireTicks ticks, half
// of the fewest idle (rounded up) retire, down to a floor of
// max(PreAllocated, RetireFloor). Half, not all: the pool shrinks in steps
// and keeps a margin for the next burst, so a steady load does not make
// and retire workers in turn. A retiring worker is one idle at that moment
// (it takes the retirement instead of an arrival); its id is reused by the
// next worker made, so ids stay below MaxWorkers (a script's __VU).
const (
	// RetireTicks is how many watch ticks in a row (2 s at the default
	// DefaultWatchEvery) an open-loop pool must have had idle workers
	// before some retire.
	RetireTicks = 8
	// RetireFloor is the fewest open-loop workers retirement leaves.
	RetireFloor = 4
)

// pool is the open loop's retirement state.
type pool struct {
	quit chan struct{} // unbuffered: only an idle worker takes a retirement

	mu    sync.Mutex
	free  []int // ids of retired workers, reused first
	next  int   // the next new id
	idle  [RetireTicks]int
	ticks int // readings in idle (up to RetireTicks)
}

// takeID is the id of the next worker made.
func (p *Phase) takeID() int {
	p.pool.mu.Lock()
	defer p.pool.mu.Unlock()
	if n := len(p.pool.free); n > 0 {
		id := p.pool.free[n-1]
		p.pool.free = p.pool.free[:n-1]
		return id
	}
	id := p.pool.next
	p.pool.next++
	return id
}

// retired takes a retired worker off the pool, once it is closed.
func (p *Phase) retired(id int) {
	p.pool.mu.Lock()
	p.pool.free = append(p.pool.free, id)
	p.pool.mu.Unlock()
	p.workers.Add(-1)
}

// retires reports whether the open-loop pool retires idle workers.
func (p *Phase) retires() bool {
	return !p.cfg.KeepWorkers && p.cfg.Iterations == nil && p.gate != nil && p.cfg.Limits.Mode != governor.Concurrency
}

// reap runs at each watch tick: it notes the pool's idle workers and
// retires some when the pool has had spare workers at each of the last
// RetireTicks ticks. It returns how many retired.
func (p *Phase) reap() int {
	if !p.retires() {
		return 0
	}
	made := int(p.workers.Load())
	idle := max(made-int(p.inflight.Load()), 0)
	pl := &p.pool
	pl.mu.Lock()
	pl.idle[pl.ticks%RetireTicks] = idle
	pl.ticks++
	fewest := idle
	for _, n := range pl.idle {
		fewest = min(fewest, n)
	}
	full := pl.ticks >= RetireTicks
	pl.mu.Unlock()
	floor := max(p.cfg.PreAllocated, RetireFloor)
	n := min((fewest+1)/2, made-floor)
	if !full || n <= 0 {
		return 0
	}
	done := 0
send:
	for ; done < n; done++ {
		select {
		case pl.quit <- struct{}{}:
		default:
			break send // no worker idle right now
		}
	}
	if done > 0 {
		// The next retirement needs RetireTicks new readings of the
		// smaller pool.
		pl.mu.Lock()
		pl.ticks, pl.idle = 0, [RetireTicks]int{}
		pl.mu.Unlock()
	}
	return done
}
