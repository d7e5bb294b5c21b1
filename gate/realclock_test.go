package gate_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/gate"
)

// TestRateWaitersOnLateTimersKeepTheOffer is the rate rule the wall clock
// cannot test exactly: waiters looping on Acquire, whose timers are served
// late (here up to 1 ms, as Linux timers are), still get offer × time
// admissions, because the burst window absorbs the lateness. Four workers
// share the gate as in a real run; after every step of the fake clock the
// test waits until all four are queued again and the head has re-armed its
// timer, so no worker's own slowness is mistaken for the gate's.
func TestRateWaitersOnLateTimersKeepTheOffer(t *testing.T) {
	const (
		rate     = 2000.0
		interval = 500 * time.Microsecond // 1/rate
		step     = 1500 * time.Microsecond
		span     = 666 * step // 999 ms
		workers  = 4
	)
	g, fc := newFake(t, rateCfg(rate))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				if _, err := g.Acquire(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	settled := func() bool { return g.Stats().Waiting == workers && fc.Waiters() == 1 }
	waitFor(t, "the workers to queue behind the first admission", settled)
	for el := time.Duration(0); el < span; el += step {
		fc.Advance(step)
		waitFor(t, "the workers to queue again", settled)
	}
	// Everything due by the end of the span: the first admission at 0,
	// then one every interval; none missed, the lateness is within the
	// burst window.
	want := 1 + uint64(span/interval)
	if s := g.Stats(); s.Admitted != want || s.Missed != 0 {
		t.Errorf("admitted %d, missed %d in %v at %v/s with timers up to %v late, want exactly %d admitted, none missed", s.Admitted, s.Missed, span, rate, step-interval, want)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a worker's Acquire ended with %v, want context.Canceled", err)
		}
	}
	if s := g.Stats(); s.Waiting != 0 || s.Cancelled != workers {
		t.Errorf("stats %+v after cancelling, want nothing waiting and %d cancelled", s, workers)
	}
}

// TestRealClockAdmitsAndNeverExceedsTheOffer runs the gate on the wall clock,
// where only behaviour can be asserted, not a rate: waiters sleeping on real
// timers are admitted (the gate moves), they stop when their context ends,
// and however late the machine runs them they never get more than the offer
// over the elapsed time plus the documented burst. A loaded machine admits
// fewer, never more; the exact rate is the fake-clock test's.
func TestRealClockAdmitsAndNeverExceedsTheOffer(t *testing.T) {
	const (
		rate    = 2000.0
		enough  = 200 // 100 ms of admissions on an idle machine
		workers = 4
	)
	g, err := gate.New(gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: rate, Offer: rate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var admitted atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	begin := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				if _, err := g.Acquire(ctx); err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Error(err)
					}
					return
				}
				if admitted.Add(1) >= enough {
					once.Do(func() { close(reached) })
				}
			}
		})
	}
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Errorf("admitted only %d in 30 s at %v/s: the gate does not move", admitted.Load(), rate)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(begin)
	n := admitted.Load()
	// The schedule's own bound, loosened by 10 % so that float rounding at
	// each restart of the schedule can never trip it; a gate that failed to
	// limit would exceed it many times over.
	if limit := 1.1*rate*elapsed.Seconds() + float64(burstTokens(rate, gate.DefaultBurst)); float64(n) > limit {
		t.Errorf("admitted %d in %v at %v/s, more than the offer allows (%.0f)", n, elapsed, rate, limit)
	}
	if s := g.Stats(); s.Waiting != 0 || s.Admitted != uint64(n) {
		t.Errorf("stats %+v after the run, want nothing waiting and %d admitted", s, n)
	}
	t.Logf("admitted %d in %v at %v/s", n, elapsed, rate)
}
