package agent

import (
	"context"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
)

// Run waits for the agents, starts them together, governs the merged
// window until the run's duration passes or ctx ends (Ctrl-C), then stops
// every agent and waits for their last deltas. A run whose wait for agents
// runs out returns ErrNotEnoughAgents.
func (c *Controller) Run(ctx context.Context) (*Result, error) {
	if err := c.waitReady(ctx); err != nil {
		if ctx.Err() != nil {
			c.stopBeforeStart()
		}
		return nil, err
	}
	tick := c.cfg.Spec.Tick
	start := time.Now()
	c.mu.Lock()
	c.running, c.start = true, start
	for _, m := range c.members {
		if m.ready {
			m.started, m.last = true, start
		}
	}
	c.mu.Unlock()
	_ = c.nc.Publish(subjStart, nil)
	if c.cfg.Started != nil {
		c.cfg.Started(start)
	}
	_, stopGov := c.gov.Start(governor.ApplierFunc(c.Apply))
	defer stopGov()

	t := time.NewTicker(tick)
	defer t.Stop()
	var end <-chan time.Time
	if d := c.cfg.Spec.Duration; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		end = timer.C
	}
	interrupted, aborted := false, ""
loop:
	for {
		select {
		case <-ctx.Done():
			interrupted = true
			break loop
		case <-end:
			break loop
		case <-t.C:
			if c.cfg.Crossed != nil {
				if aborted = c.cfg.Crossed(); aborted != "" {
					c.log.Warn("throttle "+aborted+": the run ends", "agents", "stopped")
					break loop
				}
			}
			if c.checkLost() == 0 {
				if c.cfg.Spec.Script != nil && !c.anyLost() {
					break loop // every agent ran its segment to its end
				}
				c.log.Warn("throttle every agent is lost or done: the run ends")
				// A URL run cut short by its agents' loss did not run
				// its course. A script's did, on the agents left: the
				// lost ones are named by the host (their segments did
				// not run to their end), not taken for a Ctrl-C.
				interrupted = c.cfg.Spec.Script == nil && (c.cfg.Spec.Duration <= 0 || time.Since(start) < c.cfg.Spec.Duration)
				break loop
			}
			c.publish() // also the agents' heartbeat
		}
	}
	// The governor first (no window judged on a draining run), then the
	// agents; their last deltas come after their own grace period.
	stopGov()
	c.mu.Lock()
	c.over = true
	c.mu.Unlock()
	_ = c.nc.Publish(subjStop, nil)
	_ = c.nc.Flush()
	bound := time.NewTimer(max(c.cfg.Spec.Grace, 0) + c.cfg.Spec.silence() + tick)
	defer bound.Stop()
	for c.live() > 0 {
		select {
		case <-c.finals:
		case <-t.C:
			c.checkLost()
		case <-bound.C:
			c.loseAll("no last tick after the stop")
		}
	}
	res := &Result{Start: start, End: time.Now(), Interrupted: interrupted, Aborted: aborted, Windows: c.windows(), Counts: c.m.Counts(), Agents: c.Agents()}
	res.Capacity = governor.Capacity(res.Windows, c.cfg.Spec.Limits.High)
	res.Generator = c.generator(res.Agents)
	return res, nil
}

// generator sums the agents' watches of themselves (URL and script
// agents send theirs once a tick): their ticks and signals; when no agent
// sent one, the deltas stand for ticks and their verdicts for saturated
// ones.
func (c *Controller) generator(agents []AgentInfo) engine.GeneratorSummary {
	ws := make([]*Watch, len(agents))
	for i := range agents {
		ws[i] = agents[i].Watch
	}
	if g, ok := sumWatches(ws); ok {
		return g
	}
	var g engine.GeneratorSummary
	for _, a := range agents {
		g.Ticks += int(a.Ticks)
		g.SaturatedTicks += int(a.SaturatedTicks)
	}
	c.mu.Lock()
	for _, m := range c.members {
		// The agents' own rates when saturated, summed: what the agents
		// reached together where they were the limit.
		g.Rate += m.satRate
	}
	c.mu.Unlock()
	return g
}

// stopBeforeStart ends a run interrupted while it waited for its agents:
// the run is over (a later hello is refused, a later ready is told to
// stop) and every agent waiting for the start stops without running, so
// that local agents end with the controller instead of waiting for a
// start that never comes.
func (c *Controller) stopBeforeStart() {
	c.mu.Lock()
	c.over = true
	c.mu.Unlock()
	_ = c.nc.Publish(subjStop, nil)
	_ = c.nc.Flush()
}

// Abort tells every agent to cut off its in-flight iterations at once
// instead of waiting out the grace period (a second Ctrl-C).
func (c *Controller) Abort() {
	_ = c.nc.Publish(subjAbort, nil)
	_ = c.nc.Flush()
}

// live counts the agents that started and are neither done nor lost.
func (c *Controller) live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.members {
		if m.started && !m.done && !m.Lost {
			n++
		}
	}
	return n
}

// checkLost declares lost every running agent silent for LostTicks ticks
// (on the controller's clock: no timestamp crosses machines) or whose
// connection is gone and that has sent nothing for two sends (a killed
// agent: its share would run short for the whole silence otherwise), gives
// its share to the others, and returns how many still run.
func (c *Controller) checkLost() int {
	now := time.Now()
	silent := c.cfg.Spec.silence()
	type loss struct{ id, why string }
	var lost []loss
	c.mu.Lock()
	n := 0
	for _, id := range c.order {
		m := c.members[id]
		if !m.started || m.done || m.Lost {
			continue
		}
		quiet := now.Sub(m.last)
		switch {
		case quiet > silent:
			lost = append(lost, loss{id, "silent " + silent.String()})
		case quiet > 2*c.cfg.Spec.Every && m.cid != 0 && !c.connected(m.cid) && !c.deltasInFlight():
			lost = append(lost, loss{id, "its connection closed"})
		default:
			n++
			continue
		}
		m.Lost = true
	}
	c.mu.Unlock()
	for _, l := range lost {
		c.log.Warn("throttle agent lost", "agent", l.id, "why", l.why, "share_to", n)
	}
	if len(lost) > 0 && n > 0 {
		c.publish()
	}
	return n
}

// connected reports whether the client cid is connected to the server.
func (c *Controller) connected(cid uint64) bool {
	z, err := c.srv.Connz(&server.ConnzOptions{CID: cid})
	return err != nil || len(z.Conns) > 0 // unknown counts as connected
}

// deltasInFlight reports whether agents' deltas are queued for onTick or
// being read: an agent that sent its last delta and closed its connection
// (as every agent does at its end) is gone from the server before that
// delta is read here, and is not lost while it may be among them (make
// stress once called an agent that ran its whole segment lost that way).
func (c *Controller) deltasInFlight() bool {
	if c.ticks == nil {
		return false
	}
	// The server answers a flush after everything it routed to us before
	// it, so what the agent sent before closing is queued here by then.
	_ = c.nc.FlushTimeout(time.Second)
	if c.reading.Load() > 0 {
		return true
	}
	n, _, err := c.ticks.Pending()
	return err == nil && n > 0
}

// anyLost reports whether an agent was lost (and not back).
func (c *Controller) anyLost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.Lost {
			return true
		}
	}
	return false
}

// loseAll declares every agent still running lost.
func (c *Controller) loseAll(why string) {
	c.mu.Lock()
	var lost []string
	for _, id := range c.order {
		if m := c.members[id]; m.started && !m.done && !m.Lost {
			m.Lost = true
			lost = append(lost, id)
		}
	}
	c.mu.Unlock()
	for _, id := range lost {
		c.log.Warn("throttle agent lost", "agent", id, "why", why)
	}
}

// windows are the governor's closed windows so far.
func (c *Controller) windows() []governor.Window {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return append([]governor.Window(nil), c.wins...)
}
