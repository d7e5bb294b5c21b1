package phase

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// Closed-loop workers the governor adds start spread over one cycle of the
// loop (the mean iteration so far), not at one instant: four new workers
// with a 4 s cycle start at 0, 1, 2 and 3 s. Before any iteration ended
// there is no cycle to spread over, and a pool grown without stagger
// starts at once.
func TestGovernorsNewWorkersStartStaggered(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	var runs atomic.Int64
	stop := make(chan struct{})
	p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, 16), Clock: clk, Governed: true,
		Counters: &cleanCounters{}, NewWorker: func(int) (Worker, error) { return heldWorker{stop: stop, runs: &runs}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		close(stop)
		p.wg.Wait()
	}()
	p.gate.Apply(16)

	p.spawnTo(ctx, 2, true) // no iteration has ended: no cycle, both start at once
	testwait.Until(t, 10*time.Second, "the first two workers", func() bool { return runs.Load() == 2 })

	p.iterNanos.Store(int64(8 * time.Second)) // two iterations of 4 s each
	p.iterCount.Store(2)
	p.spawnTo(ctx, 6, true)
	testwait.Until(t, 10*time.Second, "the first new worker and three timers", func() bool { return runs.Load() == 3 && clk.Waiters() == 3 })
	for want := int64(4); want <= 6; want++ {
		clk.Advance(time.Second - time.Millisecond)
		// Just before its time no timer has fired.
		if got, w := runs.Load(), clk.Waiters(); got != want-1 || w != int(7-want) {
			t.Fatalf("just before %v s: %d workers started and %d waiting, want %d and %d", want-3, got, w, want-1, 7-want)
		}
		clk.Advance(time.Millisecond)
		testwait.Until(t, 10*time.Second, "the next staggered worker", func() bool { return runs.Load() == want })
	}

	p.spawnTo(ctx, 9, false) // without stagger: all at once
	testwait.Until(t, 10*time.Second, "three workers at once", func() bool { return runs.Load() == 9 })
}

// The span is one mean iteration, at most one window.
func TestStaggerSpanIsOneCycleAtMostAWindow(t *testing.T) {
	p := &Phase{cfg: Config{Limits: governor.NewLimits(governor.Concurrency, 16)}}
	for _, c := range []struct {
		total time.Duration
		n     int64
		want  time.Duration
	}{
		{0, 0, 0},
		{3 * time.Second, 3, time.Second},
		{60 * time.Second, 2, p.cfg.Limits.Window},
	} {
		p.iterNanos.Store(int64(c.total))
		p.iterCount.Store(c.n)
		if got := p.staggerSpan(); got != c.want {
			t.Errorf("%v over %d iterations: span %v, want %v", c.total, c.n, got, c.want)
		}
	}
}
