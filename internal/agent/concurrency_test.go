package agent

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A closed-loop run over agents: the offer (in flight) is split in whole
// shares that add up to it, and the agents' workers follow them; their
// read delay reaches the controller.
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
	var res *Result
	go func() {
		defer close(done)
		var err error
		if res, err = c.Run(ctx); err != nil {
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
	// A closed loop's agents read their answers on the event loop, with
	// the kernel's receive stamps on Linux: their read delay reaches the
	// controller, summed over both (each answer counted once, the longest
	// at least the mean).
	if res == nil || runtime.GOOS != "linux" {
		return
	}
	answers := res.Counts.OK + res.Counts.Failed
	if rd := res.Counts.ReadDelay; rd.N == 0 || rd.N > answers || rd.Max < rd.Sum/time.Duration(max(rd.N, 1)) {
		t.Errorf("merged read delay %+v over %d answers", rd, answers)
	}
}
