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

// cutWorker holds each iteration until it is interrupted or the phase
// aborts it.
type cutWorker struct {
	hard       <-chan struct{}
	cutCh      chan struct{}
	runs, cuts *atomic.Int64
}

func (w cutWorker) Iterate(time.Time) {
	w.runs.Add(1)
	select {
	case <-w.cutCh:
	case <-w.hard:
	}
}
func (cutWorker) Close() {}
func (w cutWorker) Interrupt() {
	w.cuts.Add(1)
	select {
	case w.cutCh <- struct{}{}:
	default:
	}
}

// rampDownRun runs 2 closed-loop workers whose iterations never end by
// themselves on a schedule of 2 that falls to 1 at 1 s (and, rise, back
// to 2 at 1.5 s), with the ramp-down grace given, stepping a fake clock
// one RampStep at a time to 3 s. At every step, once the ramp has applied
// it, check gets the elapsed time and the interruptions so far.
func rampDownRun(t *testing.T, grace time.Duration, rise bool, check func(at time.Duration, runs, cuts int64)) {
	t.Helper()
	t0 := time.Unix(1_000_000, 0)
	clk := &stepClock{Fake: clock.NewFake(t0), tickers: map[*stepTicker]bool{}}
	sched := func(e time.Duration) float64 {
		if e >= time.Second && !(rise && e >= 1500*time.Millisecond) {
			return 1
		}
		return 2
	}
	var runs, cuts atomic.Int64
	var p *Phase
	p, err := New(Config{
		Limits: governor.NewLimits(governor.Concurrency, 2), Ceiling: sched, Duration: 3 * time.Second, Grace: -1,
		RampDownGrace: grace, Tick: RampStep, Clock: clk, Counters: &cleanCounters{}, Watch: WatchConfig{CPU: -1},
		NewWorker: func(int) (Worker, error) {
			return cutWorker{hard: p.Hard().Done(), cutCh: make(chan struct{}, 1), runs: &runs, cuts: &cuts}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Run(context.Background())
	}()
	testwait.Until(t, 10*time.Second, "the phase to start", p.Running)
	testwait.Until(t, 10*time.Second, "the ramp's ticker", func() bool { return clk.has(RampStep) })
	// applied reports whether the ramp down has been applied at t0+at.
	applied := func(at time.Duration) bool {
		p.rd.mu.Lock()
		defer p.rd.mu.Unlock()
		return p.rd.last.Equal(t0.Add(at))
	}
	testwait.Until(t, 10*time.Second, "both workers in flight", func() bool { return runs.Load() == 2 })
	for at := time.Duration(0); at < 3*time.Second; at += RampStep {
		if at > 0 {
			clk.step(t, RampStep)
		}
		if grace != 0 {
			testwait.Until(t, 10*time.Second, "the ramp down to apply the schedule", func() bool { return applied(at) })
		} else {
			testwait.Until(t, 10*time.Second, "the ramp to read the schedule", func() bool { return p.Status().Ceiling == sched(at) })
		}
		check(at, runs.Load(), cuts.Load())
	}
	clk.Advance(time.Second)
	testwait.Receive(t, done, "the phase to end")
}

// gracefulRampDown 0s (a negative grace here): the worker the falling
// schedule removes has its iteration cut off at once, the other runs on,
// and the cut-off worker starts no other iteration while the schedule
// stays down.
func TestRampDownCutsAtOnce(t *testing.T) {
	rampDownRun(t, -1, false, func(at time.Duration, runs, cuts int64) {
		want := int64(0)
		if at >= time.Second {
			want = 1
		}
		if cuts != want || runs != 2 {
			t.Errorf("at %v: %d interruptions and %d iterations, want %d and 2", at, cuts, runs, want)
		}
	})
}

// gracefulRampDown 1s: the removed worker's iteration runs on for the
// grace, then is cut off.
func TestRampDownWaitsOutTheGrace(t *testing.T) {
	rampDownRun(t, time.Second, false, func(at time.Duration, runs, cuts int64) {
		want := int64(0)
		if at >= 2*time.Second {
			want = 1
		}
		if cuts != want || runs != 2 {
			t.Errorf("at %v: %d interruptions and %d iterations, want %d and 2", at, cuts, runs, want)
		}
	})
}

// A schedule that rises again within the grace keeps the iteration.
func TestRampDownRiseKeepsTheIteration(t *testing.T) {
	rampDownRun(t, time.Second, true, func(at time.Duration, runs, cuts int64) {
		if cuts != 0 || runs != 2 {
			t.Errorf("at %v: %d interruptions and %d iterations, want none and 2", at, cuts, runs)
		}
	})
}

// Without a ramp-down grace (a URL run's stages) nothing is cut off: the
// iterations in flight above a falling schedule finish on their own.
func TestRampDownOff(t *testing.T) {
	rampDownRun(t, 0, false, func(at time.Duration, runs, cuts int64) {
		if cuts != 0 {
			t.Errorf("at %v: %d interruptions, want none", at, cuts)
		}
	})
}
