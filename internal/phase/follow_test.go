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

// A phase with a Follower has no governor: the offers the Follower applies
// are what the gate runs (clamped to the ceiling), and in closed loop the
// pool grows to them.
func TestFollowAppliesOffers(t *testing.T) {
	offers := make(chan float64)
	applied := make(chan float64)
	var runs atomic.Int64
	stop := make(chan struct{})
	l := governor.NewLimits(governor.Concurrency, 8)
	p, err := New(Config{Limits: l, Governed: true, Clock: clock.NewFake(time.Unix(0, 0)), Counters: &cleanCounters{},
		NewWorker: func(int) (Worker, error) { return heldWorker{stop: stop, runs: &runs}, nil },
		Grace:     -1,
		Follow: FollowerFunc(func(ctx context.Context, apply func(float64) float64) {
			for {
				select {
				case <-ctx.Done():
					return
				case o := <-offers:
					applied <- apply(o)
				}
			}
		})})
	if err != nil {
		t.Fatal(err)
	}
	if p.Governed() {
		t.Fatal("a following phase says it is governed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	offers <- 5
	if got := testwait.Receive(t, applied, "applied offer"); got != 5 {
		t.Fatalf("applied %v, want 5", got)
	}
	testwait.Until(t, 10*time.Second, "5 workers holding a permit", func() bool { return runs.Load() == 5 })
	offers <- 20
	if got := testwait.Receive(t, applied, "applied offer"); got != 8 {
		t.Fatalf("applied %v above the ceiling, want 8", got)
	}
	if st := p.Status(); st.Offer != 8 || st.Governor.Windows != 0 {
		t.Fatalf("status %+v: want offer 8 and no governor windows", st)
	}
	cancel()
	close(stop)
	<-done
}
