package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// Ctrl-C stops the agents, which wait for their in-flight iterations up to
// the grace period; a second Ctrl-C (Abort) cuts those off at once.
func TestAbortCutsInFlight(t *testing.T) {
	release := make(chan struct{})
	hits := make(chan struct{}, 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hits <- struct{}{}:
		default:
		}
		select { // a target that never answers while the test runs
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	spec := testSpec(t, srv.URL+"/", 20, 20)
	spec.Duration = 4 * testwait.Deadline
	spec.Grace = 4 * testwait.Deadline
	spec.Timeout = 4 * testwait.Deadline
	c := newController(t, ControllerConfig{Agents: 1, Spec: spec})
	ag := runAgent(context.Background(), c, "slow", testToken)
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(t, c, ctx)
	testwait.Receive(t, hits, "a request in flight")
	testwait.Until(t, testwait.Deadline, "requests in flight at the agent", func() bool { return c.Snapshot().InFlight > 0 })
	cancel()
	select {
	case <-done:
		t.Fatal("the run ended before its in-flight iterations' grace")
	case <-time.After(300 * time.Millisecond):
	}
	c.Abort()
	res := testwait.Receive(t, done, "the run's end after the abort")
	if err := testwait.Receive(t, ag, "the agent's end"); err != nil {
		t.Fatal(err)
	}
	if res.Counts.Aborted == 0 {
		t.Fatalf("nothing counted as aborted: %+v", res.Counts)
	}
}
