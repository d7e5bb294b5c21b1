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
// with a 0.8 s cycle start at 0, 0.2, 0.4 and 0.6 s. Before any iteration ended
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

	p.iterNanos.Store(int64(1600 * time.Millisecond)) // two iterations of 0.8 s each
	p.iterCount.Store(2)
	p.spawnTo(ctx, 6, true)
	testwait.Until(t, 10*time.Second, "the first new worker and three timers", func() bool { return runs.Load() == 3 && clk.Waiters() == 3 })
	for want := int64(4); want <= 6; want++ {
		clk.Advance(200*time.Millisecond - time.Millisecond)
		// Just before its time no timer has fired.
		if got, w := runs.Load(), clk.Waiters(); got != want-1 || w != int(7-want) {
			t.Fatalf("just before %v s: %d workers started and %d waiting, want %d and %d", float64(want-3)/5, got, w, want-1, 7-want)
		}
		clk.Advance(time.Millisecond)
		testwait.Until(t, 10*time.Second, "the next staggered worker", func() bool { return runs.Load() == want })
	}

	p.spawnTo(ctx, 9, false) // without stagger: all at once
	testwait.Until(t, 10*time.Second, "three workers at once", func() bool { return runs.Load() == 9 })
}

// The span is one mean iteration, at most half the shortest window the
// governor judges a new offer on (two ticks by default: a second).
func TestStaggerSpanIsOneCycleAtMostHalfTheShortestWindow(t *testing.T) {
	p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, 16), Governed: true,
		Counters: &cleanCounters{}, NewWorker: func(int) (Worker, error) { return countingWorker{new(atomic.Int64)}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if p.gov.Shortest() != 2*time.Second {
		t.Fatalf("shortest window %v, want the default quick span, 2 s", p.gov.Shortest())
	}
	for _, c := range []struct {
		total time.Duration
		n     int64
		want  time.Duration
	}{
		{0, 0, 0},
		{1800 * time.Millisecond, 3, 600 * time.Millisecond},
		{10 * time.Second, 2, time.Second},
	} {
		p.iterNanos.Store(int64(c.total))
		p.iterCount.Store(c.n)
		if got := p.staggerSpan(); got != c.want {
			t.Errorf("%v over %d iterations: span %v, want %v", c.total, c.n, got, c.want)
		}
	}
}
