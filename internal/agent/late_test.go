package agent

import (
	"context"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// An agent that joins after the start gets a share at once, is listed as
// late, and carries load; Ctrl-C of the controller stops both.
func TestLateAgentGetsShare(t *testing.T) {
	srv := builtinTarget(t, 1000)
	spec := testSpec(t, srv.URL+"/", 100, 100)
	spec.Duration = 4 * testwait.Deadline
	c := newController(t, ControllerConfig{Agents: 1, Spec: spec})
	first := runAgent(context.Background(), c, "first", testToken)
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(t, c, ctx)
	testwait.Until(t, testwait.Deadline, "the run to start", func() bool { return c.Snapshot().Counts.OK > 0 })
	late := runAgent(context.Background(), c, "late", testToken)
	info := func(id string) AgentInfo {
		for _, a := range c.Agents() {
			if a.ID == id {
				return a
			}
		}
		return AgentInfo{}
	}
	testwait.Until(t, testwait.Deadline, "the late agent to carry load", func() bool {
		a := info("late")
		return a.Late && a.Share > 0 && a.Attempts > 0
	})
	if f := info("first"); f.Share <= 0 || f.Late {
		t.Errorf("the first agent after the late join: %+v", f)
	}
	cancel()
	<-done
	for _, a := range []<-chan error{first, late} {
		if err := testwait.Receive(t, a, "an agent's end"); err != nil {
			t.Error(err)
		}
	}
}
