package phase

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// gatedWorker holds each iteration while hold is open.
type gatedWorker struct{ hold <-chan struct{} }

func (w gatedWorker) Iterate(time.Time) { <-w.hold }
func (gatedWorker) Close()              {}

// An open-loop pool that grew in a stall keeps every worker while they
// are busy, then, once the stall is over, retires the idle ones in steps
// down to RetireFloor; the arrivals after it still all run, the ids of new
// workers stay below the bound, and the result keeps the peak.
func TestIdleWorkersRetire(t *testing.T) { idleAfterStall(t, false) }

// With KeepWorkers (a script scenario: k6 keeps the VUs it made) the pool
// stays at the size the stall grew it to.
func TestKeepWorkersKeepsThePool(t *testing.T) { idleAfterStall(t, true) }

func idleAfterStall(t *testing.T, keep bool) {
	clk := &stepClock{Fake: clock.NewFake(time.Unix(1_000_000, 0)), tickers: map[*stepTicker]bool{}}
	const bound, every = 40, 250 * time.Millisecond
	hold := make(chan struct{})
	var mu sync.Mutex
	ids := map[int]int{}
	counters := &cleanCounters{}
	var p *Phase
	p, err := New(Config{
		Limits: governor.NewLimits(governor.Rate, 200), Duration: time.Hour, Grace: -1, MaxWorkers: bound, KeepWorkers: keep,
		Clock: clk, Counters: counters, Watch: WatchConfig{Every: every, CPU: -1, Lag: -1, Shortfall: -1},
		NewWorker: func(id int) (Worker, error) {
			mu.Lock()
			ids[id]++
			mu.Unlock()
			return gatedWorker{hold: hold}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var res *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, _ = p.Run(ctx)
	}()
	testwait.Until(t, 10*time.Second, "the watch's ticker", func() bool { return clk.has(every) })

	// The stall: every iteration holds, the pool grows to its bound and
	// stays there for more than RetireTicks ticks. (The clock moves an
	// arrival at a time: a longer step runs only ScheduleSlack's worth of
	// the arrivals it skipped.)
	for i := 0; p.Status().Workers < bound; i++ {
		if i == 10_000 {
			t.Fatalf("%d workers after %d arrivals' time, want the bound %d", p.Status().Workers, i, bound)
		}
		clk.step(t, 5*time.Millisecond)
	}
	for range 2 * RetireTicks {
		clk.step(t, every)
		if n := p.Status().Workers; n != bound {
			t.Fatalf("%d workers while all %d are busy: a busy worker retired", n, bound)
		}
	}

	// The stall ends: iterations return at once; 200/s needs a worker or two.
	close(hold)
	testwait.Until(t, 10*time.Second, "the held iterations to end", func() bool { return p.Status().InFlight == 0 })
	dropped := counters.dropped.Load()
	if keep {
		for range 4 * RetireTicks {
			clk.step(t, every)
			if n := p.Status().Workers; n != bound {
				t.Fatalf("%d workers with KeepWorkers, want all %d kept", n, bound)
			}
		}
		cancel()
		testwait.Receive(t, done, "the phase to end")
		return
	}
	var seen []int
	for range 40 * RetireTicks {
		clk.step(t, every)
		n := p.Status().Workers
		if n < RetireFloor {
			t.Fatalf("%d workers: below the floor %d", n, RetireFloor)
		}
		if len(seen) == 0 || seen[len(seen)-1] != n {
			seen = append(seen, n)
		}
		if n == RetireFloor {
			break
		}
	}
	t.Logf("workers after the stall: %v", seen)
	if last := seen[len(seen)-1]; last != RetireFloor {
		t.Fatalf("the pool shrank %v, not to the floor %d", seen, RetireFloor)
	}
	if len(seen) < 3 {
		t.Errorf("the pool went %v: it should shrink in steps (half the spare at a time)", seen)
	}
	if d := counters.dropped.Load() - dropped; d != 0 {
		t.Errorf("%d arrivals dropped after the stall: the retired workers' room is there for new ones", d)
	}
	cancel()
	testwait.Receive(t, done, "the phase to end")
	if res.Workers != bound {
		t.Errorf("result says %d workers at most, want the peak %d", res.Workers, bound)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range ids {
		if id < 0 || id >= bound {
			t.Errorf("worker id %d outside [0, %d): retired ids are reused", id, bound)
		}
	}
}
