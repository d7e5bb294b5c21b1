package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/testwait"
)

// helloAgent joins c by hand, not ready yet, and returns its connection
// and id.
func helloAgent(t *testing.T, c *Controller, name string) (*nats.Conn, string) {
	t.Helper()
	nc, err := nats.Connect(c.URL(), nats.Token(testToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cid, _ := nc.GetClientID()
	msg, err := nc.Request(subjHello, encode(Hello{CID: cid, Name: name, Cores: 1, Version: "test"}), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var w Welcome
	if err := json.Unmarshal(msg.Data, &w); err != nil || w.ID == "" {
		t.Fatalf("welcome %s: %v", msg.Data, err)
	}
	return nc, w.ID
}

// fakeAgent joins c by hand, ready, and returns its connection and id: a
// test makes it send ticks, or fall silent as a killed agent does.
func fakeAgent(t *testing.T, c *Controller, name string) (*nats.Conn, string) {
	t.Helper()
	nc, id := helloAgent(t, c, name)
	if err := nc.Publish(subjReady, []byte(id)); err != nil {
		t.Fatal(err)
	}
	return nc, id
}

// An agent that falls silent (killed) is declared lost in one line, its
// share goes to the others, the run goes on, and the report lists it; the
// counts it sent before stay counted, and a tick of it that arrives late
// still counts.
func TestSilentAgentLost(t *testing.T) {
	srv := builtinTarget(t, 1000)
	var log lines
	spec := testSpec(t, srv.URL+"/", 200, 100)
	spec.Duration = 4 * testwait.Deadline
	spec.Silence = time.Second
	c := newController(t, ControllerConfig{Agents: 2, Spec: spec, Logger: log.logger()})
	real := runAgent(context.Background(), c, "real", testToken)
	nc, id := fakeAgent(t, c, "doomed")
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(t, c, ctx)
	testwait.Until(t, testwait.Deadline, "the run to start", func() bool { return c.Snapshot().Offer > 0 })
	d := Delta{Agent: id, Seq: 1, Classes: make([]uint64, engine.NumClasses), Started: 7}
	d.Classes[engine.ClassOK] = 7
	if err := nc.Publish(subjTick, encode(d)); err != nil {
		t.Fatal(err)
	}
	// Then nothing: the agent is dead to the controller.
	isLost := func() bool {
		for _, a := range c.Agents() {
			if a.ID == id {
				return a.Lost
			}
		}
		return false
	}
	testwait.Until(t, testwait.Deadline, "the silent agent declared lost", isLost)
	shareOf := func(who string) float64 {
		for _, a := range c.Agents() {
			if a.ID == who {
				return a.Share
			}
		}
		return -1
	}
	testwait.Until(t, testwait.Deadline, "the whole offer on the live agent", func() bool {
		s := c.Snapshot()
		return shareOf("real") == s.Offer
	})
	// A late tick of the lost agent still counts (counts are counts), and
	// gives it a share back: it was stalled, not dead. Silent again, it is
	// lost again.
	d.Seq, d.Started, d.Classes[engine.ClassOK] = 2, 3, 3
	_ = nc.Publish(subjTick, encode(d))
	_ = nc.Flush()
	testwait.Until(t, testwait.Deadline, "the agent back", func() bool { return len(log.with("agent back")) == 1 })
	testwait.Until(t, testwait.Deadline, "the agent lost again", isLost)
	before := c.Snapshot().Counts.OK
	testwait.Until(t, testwait.Deadline, "the live agent to go on", func() bool { return c.Snapshot().Counts.OK > before+50 })
	cancel()
	res := <-done
	if err := testwait.Receive(t, real, "the live agent's end"); err != nil {
		t.Fatal(err)
	}
	if got := log.with("agent lost"); len(got) != 2 {
		t.Fatalf("lost lines %q", got)
	}
	var doomed AgentInfo
	for _, a := range res.Agents {
		if a.ID == id {
			doomed = a
		}
	}
	if !doomed.Lost || doomed.Returned != 1 || doomed.Attempts != 10 {
		t.Fatalf("the lost agent in the report: %+v", doomed)
	}
}

// A killed agent's connection closes: the controller declares it lost at
// its next tick, long before the silence would.
func TestDisconnectedAgentLost(t *testing.T) {
	srv := builtinTarget(t, 1000)
	var log lines
	spec := testSpec(t, srv.URL+"/", 200, 100)
	spec.Duration = 4 * testwait.Deadline
	spec.Silence = 4 * testwait.Deadline // only the closed connection can tell
	c := newController(t, ControllerConfig{Agents: 2, Spec: spec, Logger: log.logger()})
	real := runAgent(context.Background(), c, "real", testToken)
	nc, id := fakeAgent(t, c, "killed")
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(t, c, ctx)
	testwait.Until(t, testwait.Deadline, "the run to start", func() bool { return c.Snapshot().Offer > 0 })
	d := Delta{Agent: id, Seq: 1, Classes: make([]uint64, engine.NumClasses)}
	if err := nc.Publish(subjTick, encode(d)); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	nc.Close()
	testwait.Until(t, testwait.Deadline, "the killed agent lost", func() bool { return len(log.with("its connection closed")) == 1 })
	cancel()
	res := <-done
	if err := testwait.Receive(t, real, "the live agent's end"); err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Agents {
		if a.Lost != (a.ID == id) {
			t.Errorf("agent %+v", a)
		}
	}
}

// An agent still making its script's VUs says so every makingEvery, and
// the controller's wait for its agents starts again at each word: a run of
// 100 000 VUs on a slow machine is not refused as "not enough agents" while
// its agents are busy making them. An agent that joined and went quiet is
// still given up on after the wait.
func TestWaitCoversMakingVUs(t *testing.T) {
	const wait = time.Second
	c := newController(t, ControllerConfig{Agents: 1, Wait: wait, Spec: testSpec(t, "http://127.0.0.1:1/", 100, 10)})
	nc, id := helloAgent(t, c, "busy")
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- c.waitReady(context.Background()) }()
	// Making VUs for three waits' time, saying so ten times a wait.
	for time.Since(began) < 3*wait {
		select {
		case err := <-done:
			t.Fatalf("the wait ended after %v while the agent was making its VUs: %v", time.Since(began).Round(time.Millisecond), err)
		case <-time.After(wait / 10):
		}
		if err := nc.Publish(subjMaking, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Publish(subjReady, []byte(id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ready after making its VUs: %v", err)
		}
	case <-time.After(testwait.Deadline):
		t.Fatal("the wait did not end once the agent was ready")
	}

	// Joined, then quiet: given up on after the wait, saying so.
	c2 := newController(t, ControllerConfig{Agents: 1, Wait: wait, Spec: testSpec(t, "http://127.0.0.1:1/", 100, 10)})
	helloAgent(t, c2, "quiet")
	if err := c2.waitReady(context.Background()); !errors.Is(err, ErrNotEnoughAgents) {
		t.Fatalf("a quiet agent: %v, want %v", err, ErrNotEnoughAgents)
	}
}

// A script's agent lost mid-run (its connection closed) while the others
// run their segments to their end: the run ends when they are done, not
// as interrupted, and the lost agent is in the result for the host to name
// (its segment did not run to its end; exit 1, not a Ctrl-C's 105).
func TestScriptAgentLostNotInterrupted(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	spec, _ := scriptSpec(t, map[string]string{"main.js": `
import http from 'k6/http';
export const options = { scenarios: { pv: { executor: 'per-vu-iterations', vus: 2, iterations: 3 } } };
export default function () { http.get(__ENV.BASE + '/'); }
`}, map[string]string{"BASE": srv.URL})
	var log lines
	c := newController(t, ControllerConfig{Agents: 2, Spec: spec, Logger: log.logger()})
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Deadline)
	defer cancel()
	nc, id := fakeAgent(t, c, "killed")
	done := startRun(t, c, ctx)
	real := runAgent(ctx, c, "real", testToken)
	testwait.Until(t, testwait.Deadline, "the run to start", func() bool { return hits.Load() > 0 })
	nc.Close()
	res := <-done
	if err := testwait.Receive(t, real, "the live agent's end"); err != nil {
		t.Fatal(err)
	}
	if res == nil || ctx.Err() != nil {
		t.Fatalf("the run did not end on its own: %v", ctx.Err())
	}
	if res.Interrupted {
		t.Fatalf("a script run that lost an agent is reported interrupted: %+v", res.Agents)
	}
	for _, a := range res.Agents {
		if a.Lost != (a.ID == id) {
			t.Errorf("agent %+v", a)
		}
	}
	if n := len(log.with("its connection closed")); n != 1 {
		t.Errorf("%d lost lines", n)
	}
}
