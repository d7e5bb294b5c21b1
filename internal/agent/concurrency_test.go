package agent

import (
	"context"
	"math"
	"testing"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A closed-loop run over agents: the offer (in flight) is split in whole
// shares that add up to it, and the agents' workers follow them.
func TestConcurrencyShares(t *testing.T) {
	srv := builtinTarget(t, 2000)
	spec := testSpec(t, srv.URL+"/", 9, 1)
	spec.Limits.Mode = governor.Concurrency
	spec.Limits.Start = 7
	spec.Duration = 4 * testwait.Deadline
	c := newController(t, ControllerConfig{Agents: 2, Spec: spec})
	a1, a2 := runAgent(context.Background(), c, "one", testToken), runAgent(context.Background(), c, "two", testToken)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := c.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	testwait.Until(t, testwait.Deadline, "attempts from both agents", func() bool {
		as := c.Agents()
		return len(as) == 2 && as[0].Attempts > 20 && as[1].Attempts > 20
	})
	offer, shares := c.split()
	var sum float64
	for id, s := range shares {
		if s != math.Trunc(s) || s < 1 {
			t.Errorf("share %v of %s is not a whole number >= 1", s, id)
		}
		sum += s
	}
	if offer >= 2 && sum != math.Round(offer) {
		t.Errorf("shares add up to %v, offer %v", sum, offer)
	}
	cancel()
	<-done
	for _, a := range []<-chan error{a1, a2} {
		if err := testwait.Receive(t, a, "an agent's end"); err != nil {
			t.Error(err)
		}
	}
}
