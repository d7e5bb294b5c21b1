package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/options"
)

// DefaultWait is how long a controller waits for its agents.
const DefaultWait = time.Minute

// ControllerConfig describes a run spread over agents.
type ControllerConfig struct {
	// Listen is the embedded NATS server's HOST:PORT (default
	// DefaultListen; port 0 picks a free one).
	Listen string
	// Token is what agents must present (required).
	Token string
	// TLS, if set, secures the link (--tls-cert, --tls-key, --tls-ca).
	TLS TLS
	// Agents is how many agents the run waits for before it starts.
	Agents int
	// Wait bounds that wait (default DefaultWait).
	Wait time.Duration
	// Spec is the run; its Limits are the governor's.
	Spec Spec
	// Settle is the governor's settle span (governor.WithSettle).
	Settle time.Duration
	// Governor are extra options for the governor.
	Governor []governor.Option
	// Version is this build's; an agent of another version is refused.
	Version string
	// Logger receives the governor's movement lines and the agents' lines
	// (joined, lost, refused). Default: discard.
	Logger *slog.Logger
	// Latency receives every agent's latencies (report.Recorder).
	Latency Recorder
	// Observer receives every closed window.
	Observer func(governor.Window)
	// Joined, if set, is called as each agent joins (tests, --local-agents).
	Joined func(AgentInfo)
	// K6, for a script run, receives every agent's k6 metric and check
	// deltas as they arrive (the controller's runner merges them).
	K6 func(agent string, d *script.Deltas)
	// Started, if set, is told when the agents start.
	Started func(time.Time)
	// Crossed, if set, is asked every tick whether an abortOnFail
	// threshold is crossed over the merged metrics: a non-empty answer
	// ends the run, stopping every agent, and is the Result's Aborted.
	Crossed func() string
}

// AgentInfo is what the report says about one agent.
type AgentInfo struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Cores   int    `json:"cores"`
	Version string `json:"version"`
	// Attempts are the agent's resolved attempts; Failed of them failed.
	Attempts uint64 `json:"attempts"`
	Failed   uint64 `json:"failed"`
	// Share is the agent's last share of the offer; Weight its weight.
	Share  float64 `json:"share"`
	Weight float64 `json:"weight"`
	// Ticks are the deltas it sent (one every Spec.Every); LateTicks of
	// them arrived more than 1.5 × Every after the one before.
	// SaturatedTicks are its watch's ticks in which it was saturated
	// (Watch.SaturatedTicks; the run's generator sums them), or for an
	// agent that sent no watch yet the deltas whose verdict said it was.
	// Every agent, a URL run's or a script's, sends its watch once a tick.
	Ticks          uint64 `json:"ticks"`
	SaturatedTicks uint64 `json:"saturated_ticks"`
	LateTicks      uint64 `json:"late_ticks"`
	// Late: it joined after the start. Lost: it fell silent and lost its
	// share (and never spoke again); Returned counts the times a lost agent
	// spoke again and got a share back. Err: its phase failed.
	Late bool `json:"late,omitempty"`
	Lost bool `json:"lost,omitempty"`
	// Segment is its execution segment of a k6 script run.
	Segment string `json:"segment,omitempty"`
	// Iterations are the script iterations it ran (ok and failed).
	Iterations uint64 `json:"iterations,omitempty"`
	Returned   int    `json:"returned,omitempty"`
	Err        string `json:"error,omitempty"`
	// Watch is the agent's last word on its watch of itself (nil: it
	// sent none).
	Watch *Watch `json:"watch,omitempty"`
}

type member struct {
	AgentInfo
	ready, started, done bool
	last                 time.Time // the controller's clock: its last delta
	saturated            bool
	cid                  uint64  // its connection's client id, 0 unknown
	satRate              float64 // the attempt rate it reported over its saturated ticks
	inflight             int64
	workers              int
}

// countSaturated counts d's word on the agent's watch of itself: an
// agent that sent its watch has its saturated ticks, the watch's ticks in
// which it was saturated, as Result.Generator sums them; one that has not
// (a script agent with no phase), the deltas whose verdict said it was.
// (Counting the deltas of an agent that sends its watch counted ticks of
// another clock: 8 saturated deltas beside 6 saturated watch ticks.)
func (m *member) countSaturated(d *Delta) {
	if d.Watch != nil {
		m.Watch = d.Watch
	}
	switch {
	case m.Watch != nil:
		m.SaturatedTicks = uint64(m.Watch.SaturatedTicks)
	case d.Saturated:
		m.SaturatedTicks++
	}
}

// Result is what a run over agents measured.
type Result struct {
	Start, End  time.Time
	Interrupted bool
	Windows     []governor.Window
	Counts      engine.Counts
	Capacity    governor.Estimate
	Agents      []AgentInfo
	// Aborted is why Crossed ended the run ("" it did not).
	Aborted string
	// Generator sums the agents' watches: ticks and saturated ticks.
	Generator engine.GeneratorSummary
}

// Controller runs the embedded NATS server, waits for agents, ships the
// run, judges the merged window with one governor and splits its offer.
type Controller struct {
	cfg  ControllerConfig
	log  *slog.Logger
	srv  *server.Server
	nc   *nats.Conn
	m    merged
	gov  *governor.Governor
	subs []*nats.Subscription
	// ticks is the subscription to the agents' deltas, and reading counts
	// deltas onTick is reading: while either has one, an agent's last
	// delta may still be on its way in (checkLost).
	ticks   *nats.Subscription
	reading atomic.Int32

	wmu  sync.Mutex
	wins []governor.Window

	mu      sync.Mutex
	members map[string]*member
	order   []string
	running bool
	over    bool
	start   time.Time
	offer   float64
	seq     uint64
	readyN  chan struct{} // signalled when a member gets ready
	making  chan struct{} // signalled when a member says it is making its VUs
	finals  chan struct{} // signalled on every final delta or loss
	// segments are a script run's execution segments, given out in the
	// order agents join; one run's segments are never given twice.
	segments []string
}

// NewController starts the embedded NATS server and listens for agents.
func NewController(cfg ControllerConfig) (*Controller, error) {
	if cfg.Agents < 1 {
		return nil, fmt.Errorf("--agents must be >= 1, got %d", cfg.Agents)
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Spec.Tick <= 0 {
		cfg.Spec.Tick = governor.DefaultTickFor(cfg.Spec.Limits.Window)
	}
	c := &Controller{cfg: cfg, log: cfg.Logger, members: map[string]*member{}, readyN: make(chan struct{}, 1), making: make(chan struct{}, 1), finals: make(chan struct{}, 1)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.m.saturated = c.anySaturated
	l := cfg.Spec.Limits
	if cfg.Spec.Fixed {
		l.Floor, l.Start = l.Ceiling, l.Ceiling
	}
	opts := []governor.Option{governor.WithTick(cfg.Spec.Tick), governor.WithSettle(cfg.Settle), governor.WithLogger(c.log),
		governor.WithObserver(c.observe)}
	gov, err := governor.New(l, &c.m, append(opts, cfg.Governor...)...)
	if err != nil {
		return nil, err
	}
	c.gov = gov
	c.cfg.Spec.Every = gov.Check()
	if cfg.Spec.Script != nil {
		for _, seg := range options.Split(cfg.Agents) {
			c.segments = append(c.segments, seg.String())
		}
		c.cfg.Spec.Script.Sequence = options.Sequence(cfg.Agents)
	}
	if c.srv, err = serve(cfg.Listen, cfg.Token, cfg.TLS, c.log); err != nil {
		return nil, err
	}
	if c.nc, err = connectInProcess(c.srv, cfg.Token); err != nil {
		c.srv.Shutdown()
		return nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
	}
	for subj, h := range map[string]nats.MsgHandler{subjHello: c.onHello, subjReady: c.onReady, subjMaking: c.onMaking, subjTick: c.onTick} {
		s, err := c.nc.Subscribe(subj, h)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.subs = append(c.subs, s)
		if subj == subjTick {
			c.ticks = s
		}
	}
	if err := c.nc.Flush(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Mode is the run's governor mode.
func (c *Controller) Mode() governor.Mode { return c.cfg.Spec.Limits.Mode }

// Governed reports whether the controller's governor moves the offer
// (not Spec.Fixed: then it judges the merged windows with the offer
// pinned at the ceiling).
func (c *Controller) Governed() bool { return !c.cfg.Spec.Fixed }

// Tick is the run's tick (the spec's, or the governor's default for its
// window).
func (c *Controller) Tick() time.Duration { return c.cfg.Spec.Tick }

// URL is the nats:// address agents join.
func (c *Controller) URL() string { return clientURL(c.srv) }

// Close stops the server; agents still connected see it go and stop.
func (c *Controller) Close() {
	if c.nc != nil {
		c.nc.Close()
	}
	c.srv.Shutdown()
	c.srv.WaitForShutdown()
}

func (c *Controller) anySaturated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.started && !m.Lost && !m.done && m.saturated {
			return true
		}
	}
	return false
}

// onHello answers an agent's announcement: its id and the run, or a refusal.
func (c *Controller) onHello(msg *nats.Msg) {
	var h Hello
	reply := func(w Welcome) { _ = msg.Respond(encode(w)) }
	if err := json.Unmarshal(msg.Data, &h); err != nil || h.Name == "" {
		reply(Welcome{Refused: "a hello without a name"})
		return
	}
	if c.cfg.Version != "" && h.Version != c.cfg.Version {
		c.log.Warn("throttle agent refused: another version", "agent", h.Name, "version", h.Version, "want", c.cfg.Version)
		reply(Welcome{Refused: fmt.Sprintf("the controller runs throttle %s, this agent %s", c.cfg.Version, h.Version)})
		return
	}
	c.mu.Lock()
	if c.over {
		c.mu.Unlock()
		reply(Welcome{Refused: "the run is over"})
		return
	}
	segment := ""
	if c.cfg.Spec.Script != nil {
		if len(c.segments) == 0 {
			c.mu.Unlock()
			c.log.Warn("throttle agent refused: every segment of the script is taken", "agent", h.Name)
			reply(Welcome{Refused: fmt.Sprintf("the script runs in %d segments and every one is taken", c.cfg.Agents)})
			return
		}
		segment, c.segments = c.segments[0], c.segments[1:]
	}
	id := h.Name
	for n := 2; c.members[id] != nil; n++ {
		id = fmt.Sprintf("%s-%d", h.Name, n)
	}
	c.members[id] = &member{AgentInfo: AgentInfo{ID: id, Name: h.Name, Cores: h.Cores, Version: h.Version, Weight: 1, Late: c.running, Segment: segment}, cid: h.CID}
	c.order = append(c.order, id)
	spec := c.cfg.Spec
	c.mu.Unlock()
	c.log.Info("throttle agent joined", "agent", id, "cores", h.Cores, "version", h.Version)
	reply(Welcome{ID: id, Spec: &spec, Segment: segment})
}

// onReady marks an agent ready; one that is ready after the start starts
// at once and gets a share.
func (c *Controller) onReady(msg *nats.Msg) {
	id := string(msg.Data)
	c.mu.Lock()
	m := c.members[id]
	if m == nil || m.ready {
		c.mu.Unlock()
		return
	}
	if c.over {
		// Interrupted before the start (stopBeforeStart): this agent,
		// ready only now, stops as the others did.
		c.mu.Unlock()
		_ = c.nc.Publish(subjStop, nil)
		return
	}
	m.ready = true
	late := c.running
	if late {
		m.started, m.last = true, time.Now()
	}
	c.mu.Unlock()
	if c.cfg.Joined != nil {
		c.cfg.Joined(c.info(m))
	}
	if late {
		_ = c.nc.Publish(subjStart+"."+id, nil)
		c.publish()
		c.log.Info("throttle agent started late", "agent", id)
	}
	select {
	case c.readyN <- struct{}{}:
	default:
	}
}

// onMaking notes that an agent that joined is still making its VUs (k6
// makes every VU before the test starts; at 100 000 VUs on a slow machine
// that can outlast --wait): the wait for the agents starts again.
func (c *Controller) onMaking(msg *nats.Msg) {
	c.mu.Lock()
	m := c.members[string(msg.Data)]
	busy := m != nil && !m.ready
	c.mu.Unlock()
	if !busy {
		return
	}
	select {
	case c.making <- struct{}{}:
	default:
	}
}

// info is m's report, read under the lock.
func (c *Controller) info(m *member) AgentInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m.AgentInfo
}

// onTick merges one agent's delta.
func (c *Controller) onTick(msg *nats.Msg) {
	c.reading.Add(1)
	defer c.reading.Add(-1)
	var d Delta
	if err := json.Unmarshal(msg.Data, &d); err != nil {
		c.log.Warn("throttle agent tick unreadable", "err", err)
		return
	}
	if len(d.Hist) > 0 && c.cfg.Latency != nil {
		h, err := decodeHist(d.Hist)
		if err != nil {
			c.log.Warn("throttle agent tick histogram unreadable", "agent", d.Agent, "err", err)
		} else {
			replay(h, c.cfg.Latency)
		}
	}
	c.mu.Lock()
	m := c.members[d.Agent]
	if m == nil {
		c.mu.Unlock()
		return // not one of this run's: counts nothing
	}
	c.m.add(&d)
	now := time.Now()
	if m.Ticks > 0 && now.Sub(m.last) > c.cfg.Spec.Every*3/2 {
		m.LateTicks++
	}
	m.Ticks++
	m.last = now
	if d.CID != 0 {
		m.cid = d.CID
	}
	m.Iterations += d.IterOK + d.IterFailed
	for i, n := range d.Classes {
		m.Attempts += n
		if engine.Class(i) != engine.ClassOK {
			m.Failed += n
		}
	}
	m.saturated, m.inflight, m.workers = d.Saturated, d.InFlight, d.Workers
	m.countSaturated(&d)
	if d.SatRate > 0 {
		m.satRate = d.SatRate
	}
	m.Weight = reweight(m.Weight, d.Saturated)
	back := m.Lost && !d.Final && !c.over
	if back {
		// A stall, not a death: counts are counts, and the agent gets a
		// share again (until then it ran at the least a gate runs).
		m.Lost = false
		m.Returned++
	}
	if d.Final {
		m.done, m.Err = true, d.Err
	}
	c.mu.Unlock()
	if d.K6 != nil && c.cfg.K6 != nil {
		c.cfg.K6(d.Agent, d.K6) // a member's: an unknown agent's deltas count nothing
	}
	if back {
		c.log.Warn("throttle agent back", "agent", d.Agent)
		c.publish()
	}
	if d.Final {
		select {
		case c.finals <- struct{}{}:
		default:
		}
	}
}

// publish sends the offer and every running agent's share of it.
func (c *Controller) publish() { c.publishOffer(-1) }

// publishOffer makes offer (when >= 0) the offer, splits it and sends it;
// the offer and the shares change under one lock, so a reader never sees
// one without the other.
func (c *Controller) publishOffer(offer float64) {
	c.mu.Lock()
	if offer >= 0 {
		c.offer = offer
	}
	weights := map[string]float64{}
	for id, m := range c.members {
		if m.started && !m.Lost && !m.done {
			weights[id] = m.Weight
		}
	}
	shares := split(c.offer, weights, c.cfg.Spec.Limits.Mode == governor.Concurrency)
	for id, s := range shares {
		c.members[id].Share = s
	}
	c.seq++
	o := Offer{Seq: c.seq, Offer: c.offer, Shares: shares}
	c.mu.Unlock()
	_ = c.nc.Publish(subjOffer, encode(o))
}

// Apply is the governor's applier: the offer is split between the agents.
func (c *Controller) Apply(offer float64) float64 {
	c.publishOffer(offer)
	return offer
}

// split is the offer and the shares of it in force, read together.
func (c *Controller) split() (offer float64, shares map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	shares = map[string]float64{}
	for id, m := range c.members {
		if m.started && !m.Lost && !m.done {
			shares[id] = m.Share
		}
	}
	return c.offer, shares
}

func (c *Controller) observe(w governor.Window) {
	c.wmu.Lock()
	c.wins = append(c.wins, w)
	c.wmu.Unlock()
	if c.cfg.Observer != nil {
		c.cfg.Observer(w)
	}
}

// Counts are the merged counters so far. Unlike Snapshot it takes no lock
// but the counters', so a window's observer may call it.
func (c *Controller) Counts() engine.Counts { return c.m.Counts() }

// Snapshot is the run's live view: the merged counters and the offer.
func (c *Controller) Snapshot() engine.Snapshot {
	s := engine.Snapshot{Counts: c.m.Counts(), Governor: c.gov.State()}
	c.mu.Lock()
	s.Offer = c.offer
	if !c.start.IsZero() {
		s.Elapsed = time.Since(c.start)
	}
	for _, m := range c.members {
		if m.started && !m.Lost && !m.done {
			s.InFlight += m.inflight
			s.Workers += m.workers
		}
	}
	c.mu.Unlock()
	return s
}

// Agents lists the agents so far, in the order they joined.
func (c *Controller) Agents() []AgentInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]AgentInfo, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.members[id].AgentInfo)
	}
	return out
}

// ErrNotEnoughAgents is the wait for agents running out.
var ErrNotEnoughAgents = errors.New("not enough agents")

// waitReady waits until Agents agents are ready, for at most Wait since
// it began or since an agent last said it is still making its VUs.
func (c *Controller) waitReady(ctx context.Context) error {
	t := time.NewTimer(c.cfg.Wait)
	defer t.Stop()
	extended := ""
	for {
		c.mu.Lock()
		var ready []string
		for _, id := range c.order {
			if c.members[id].ready {
				ready = append(ready, id)
			}
		}
		c.mu.Unlock()
		if len(ready) >= c.cfg.Agents {
			return nil
		}
		select {
		case <-c.readyN:
		case <-c.making:
			t.Reset(c.cfg.Wait)
			extended = " since an agent last said it was making its VUs"
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			who := "none joined"
			if len(ready) > 0 {
				who = "ready: " + strings.Join(ready, ", ")
			}
			return fmt.Errorf("%w: waited %v%s for %d agents at %s, %d ready (%s)", ErrNotEnoughAgents, c.cfg.Wait, extended, c.cfg.Agents, c.URL(), len(ready), who)
		}
	}
}
