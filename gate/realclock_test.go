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

// TestRealClockRate is the one test on the wall clock: 2 000/s for 1 s
// admits 2 000 ± 5 %, with waiters sleeping on real timers that fire late.
func TestRealClockRate(t *testing.T) {
	const rate, span = 2000.0, time.Second
	g, err := gate.New(gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: rate, Offer: rate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), span)
	defer cancel()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := g.Acquire(ctx); err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Error(err)
					}
					return
				}
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	n := float64(admitted.Load())
	if want := rate * span.Seconds(); n < want*0.95 || n > want*1.05 {
		t.Errorf("admitted %v in %v at %v/s, want %v ± 5%%", n, span, rate, want)
	}
	if s := g.Stats(); s.Waiting != 0 || s.Admitted != uint64(n) {
		t.Errorf("stats %+v after the run, want nothing waiting and %v admitted", s, n)
	}
	t.Logf("admitted %v in %v at %v/s", n, span, rate)
}
