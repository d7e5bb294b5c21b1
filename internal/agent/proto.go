package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/targets"
)

// Subjects of the conversation (see the package doc).
const (
	subjHello = "throttle.hello"
	subjReady = "throttle.ready"
	// subjMaking: an agent still making its script's VUs (every
	// makingEvery); the controller's wait for its agents starts again.
	subjMaking = "throttle.making"
	subjStart  = "throttle.start"
	subjTick   = "throttle.tick"
	subjOffer  = "throttle.offer"
	subjStop   = "throttle.stop"
	subjAbort  = "throttle.abort"
)

// makingEvery is how often an agent making its VUs says so: well inside
// the default --wait (DefaultWait), so a controller never gives up on an agent that is busy
// making 100 000 VUs on a slow machine, and still gives up on one that
// went quiet.
const makingEvery = 2 * time.Second

// LostTicks is how many ticks of silence make an agent lost (to the
// controller) or the controller gone (to an agent), but never less than
// MinSilence: a loaded machine stalls a process for a moment now and then.
const (
	LostTicks  = 3
	MinSilence = 5 * time.Second
	// MinScriptSilence is MinSilence for a k6 script's agents: making tens
	// of thousands of VUs (each an init context, the heap and its GC
	// growing) on a loaded machine stalls an agent, or the controller
	// sharing its cores, for seconds (2.5 s seen between two offers with
	// 3 000 VUs an agent at load 5.5 on 2 cores), and an agent that takes
	// the controller for gone stops its segment for good. A dead peer is
	// seen sooner anyway: its connection closes.
	MinScriptSilence = 30 * time.Second
)

// silence is how long a peer may be silent before it is gone: the run's
// Silence, else LostTicks ticks but at least MinSilence (MinScriptSilence
// for a script's run).
func (s Spec) silence() time.Duration {
	if s.Silence > 0 {
		return s.Silence
	}
	least := MinSilence
	if s.Script != nil {
		least = MinScriptSilence
	}
	return max(time.Duration(LostTicks)*s.Tick, least)
}

// Hello is an agent's announcement.
type Hello struct {
	// CID is the agent's client id on the controller's NATS server: its
	// connection closing (a killed agent) is seen at once.
	CID     uint64 `json:"cid,omitempty"`
	Name    string `json:"name"`
	Cores   int    `json:"cores"`
	Version string `json:"version"`
}

// Welcome answers a Hello: the agent's id in this run and what to run, or
// why it is refused.
type Welcome struct {
	ID   string `json:"id,omitempty"`
	Spec *Spec  `json:"spec,omitempty"`
	// Segment is the agent's execution segment of a k6 script run.
	Segment string `json:"segment,omitempty"`
	Refused string `json:"refused,omitempty"`
}

// Target is one request of a URL run, as it travels.
type Target struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
}

// Spec is a URL/targets run as the controller ships it: what every agent
// needs to build its share of the phase.
type Spec struct {
	Targets  []Target        `json:"targets"`
	Limits   governor.Limits `json:"limits"`
	Fixed    bool            `json:"fixed,omitempty"`
	Duration time.Duration   `json:"duration"`
	Tick     time.Duration   `json:"tick"`
	// Every is how often an agent sends its deltas: at every read of the
	// controller's governor (governor.Check, a fifth of the tick with the
	// early breach on). Once a tick instead delays the evidence by up to a
	// tick and slows convergence (internal/sim, TestHundredAgents...).
	Every   time.Duration `json:"every"`
	MaxVUs  int           `json:"max_vus"` // each agent's
	Timeout time.Duration `json:"timeout"`
	Tries   int           `json:"tries"`
	FailOn  string        `json:"fail_on"`
	Slow    time.Duration `json:"slow,omitempty"`
	Grace   time.Duration `json:"grace"`
	// Silence is how long an agent or the controller may be silent before
	// the other takes it for gone (0: LostTicks ticks, at least MinSilence).
	Silence  time.Duration `json:"silence,omitempty"`
	Insecure bool          `json:"insecure,omitempty"`
	HTTP2    bool          `json:"http2,omitempty"`
	// Colocated is how many agents share one machine's cores
	// (--local-agents N): each agent's watch of itself then takes a tick
	// as CPU-saturated at its share of the machine's cores
	// (phase.WatchConfig.Colocated), since each sees every core as its own
	// and N of them can fill the machine while none fills it alone. 0 or
	// 1: an agent has its machine to itself.
	Colocated int `json:"colocated,omitempty"`
	// Script, if set, makes the run a k6 script's: the agents run their
	// segments of it as authored (Targets and the phase settings above
	// are unused but Tick, Every and Silence).
	Script *ScriptSpec `json:"script,omitempty"`
}

// SpecOf is the Spec of a URL run's engine configuration (with its
// defaults filled in) for n agents.
func SpecOf(c engine.Config, n int) Spec {
	s := Spec{Limits: c.Limits, Fixed: c.Fixed, Duration: c.Duration, Tick: c.Tick, Timeout: c.Timeout, Tries: c.Tries,
		Slow: c.Slow, Grace: c.Grace, Insecure: c.Insecure, HTTP2: c.HTTP2, MaxVUs: c.MaxVUs}
	if s.Tick <= 0 {
		s.Tick = governor.DefaultTick // as the phase runtime's default
	}
	if n > 1 && s.MaxVUs > 0 {
		s.MaxVUs = (s.MaxVUs + n - 1) / n
	}
	if c.FailOn != nil {
		s.FailOn = c.FailOn.String()
	}
	for _, t := range c.Targets {
		s.Targets = append(s.Targets, Target{Method: t.Method, URL: t.URL.String(), Header: t.Header, Body: t.Body})
	}
	return s
}

// engineConfig is the agent's phase for s: the run's settings, with an
// offer that follows the controller (the agent's gate may go anywhere from
// the least a gate runs to the run's ceiling; the controller's governor
// holds the run's own limits).
func (s Spec) engineConfig() (engine.Config, error) {
	c := engine.Config{Limits: s.Limits, Duration: s.Duration, Tick: s.Tick, MaxVUs: s.MaxVUs, Timeout: s.Timeout,
		Tries: s.Tries, Slow: s.Slow, Grace: s.Grace, Insecure: s.Insecure, HTTP2: s.HTTP2}
	c.Limits.Floor = 0.01
	if c.Limits.Mode == governor.Concurrency {
		c.Limits.Floor = 1
	}
	c.Limits.Floor = min(c.Limits.Floor, c.Limits.Ceiling)
	c.Limits.Start = c.Limits.Floor
	if s.FailOn != "" {
		f, err := engine.ParseFailOn(s.FailOn)
		if err != nil {
			return c, fmt.Errorf("the run's fail-on: %w", err)
		}
		c.FailOn = &f
	}
	for _, t := range s.Targets {
		u, err := url.Parse(t.URL)
		if err != nil {
			return c, fmt.Errorf("the run's target %q: %w", t.URL, err)
		}
		h := t.Header
		if h == nil {
			h = http.Header{}
		}
		c.Targets = append(c.Targets, targets.Target{Method: t.Method, URL: u, Header: h, Body: t.Body})
	}
	return c, nil
}

// Delta is what one agent counted since its previous tick: counts only,
// so a late one is merged into whatever window is open when it arrives.
type Delta struct {
	Agent string `json:"agent"`
	Seq   uint64 `json:"seq"`
	// CID is the agent's client id now (it changes when the client
	// reconnects).
	CID uint64 `json:"cid,omitempty"`
	// Classes counts resolved attempts by engine class (engine.Class order).
	Classes     []uint64      `json:"classes"`
	Started     uint64        `json:"started"`
	IterOK      uint64        `json:"iter_ok"`
	IterFailed  uint64        `json:"iter_failed"`
	Dropped     uint64        `json:"dropped"`
	Missed      uint64        `json:"missed,omitempty"` // arrivals the agent's generator fell behind the schedule to make
	Aborted     uint64        `json:"aborted"`
	Unreachable uint64        `json:"unreachable"`
	Latency     time.Duration `json:"latency"` // summed, of the resolved attempts
	// ReadDelay and ReadAnswers are the read delay (engine.Meter.ReadDelay)
	// the agent's answers gained since its last delta and how many answers
	// it holds; ReadMax is the longest one so far (not a delta: the
	// controller keeps the largest). Omitted when zero, so a controller
	// that does not know them, or an agent that does not send them (no
	// kernel stamps), leaves the run's read delay as it was.
	ReadDelay   time.Duration `json:"read_delay,omitempty"`
	ReadAnswers uint64        `json:"read_answers,omitempty"`
	ReadMax     time.Duration `json:"read_max,omitempty"`
	// Saturated is the agent's watch's verdict at this tick.
	Saturated bool    `json:"saturated,omitempty"`
	SatRate   float64 `json:"sat_rate,omitempty"`
	InFlight  int64   `json:"in_flight"`
	Workers   int     `json:"workers"`
	// Hist is the HDR histogram of this tick's latencies (µs), V2-encoded.
	Hist []byte `json:"hist,omitempty"`
	// K6 are a script run's k6 metric and check deltas since the last
	// tick (the controller's runner merges them).
	K6 *script.Deltas `json:"k6,omitempty"`
	// Watch is the agent's watch of itself so far (cumulative, not a
	// delta: the newest replaces the one before), sent once a tick and
	// with the final delta; nil from an agent that has none to send.
	Watch *Watch `json:"watch,omitempty"`
	// Final is the agent's last tick: its phase is over.
	Final bool `json:"final,omitempty"`
	// Err, on a final tick, says why the agent's phase failed.
	Err string `json:"err,omitempty"`
}

// Watch is one agent's watch of itself (phase.GeneratorSummary) as it
// travels and as the report's "agents" entry shows it: a process's CPU
// and scheduling are its own, so each agent judges itself and the
// controller sums the verdicts (Result.Generator).
type Watch struct {
	Ticks          int            `json:"ticks"`
	SaturatedTicks int            `json:"saturated_ticks"`
	Rate           float64        `json:"rate,omitempty"`
	Signals        map[string]int `json:"signals,omitempty"`
	// MaxLag is the largest tick's mean schedule lag; PeakCPU the most
	// cores the agent's process used in a tick (-1 unknown); MaxWait the
	// largest tick's 99th percentile of the time its goroutines waited
	// to run (the wait rule's reading; 0 when no tick had enough samples);
	// MaxReadDelay the largest tick's mean read delay (the read rule's
	// reading; 0 when no tick had enough answers, or from an agent that
	// does not send it).
	MaxLag       time.Duration `json:"max_lag_ns"`
	PeakCPU      float64       `json:"peak_cpu"`
	MaxWait      time.Duration `json:"max_wait_ns"`
	MaxReadDelay time.Duration `json:"max_read_delay_ns"`
	// PeakMachine is the machine's most busy cores in a tick, read for a
	// local agent's cpu rule (phase's watch_machine.go), and
	// MachineSpared the ticks its share alone would have held for that
	// rule that the machine's room let off; absent when the agent did not
	// read the machine.
	PeakMachine   float64 `json:"peak_machine_cpu,omitempty"`
	MachineSpared int     `json:"machine_spared_ticks,omitempty"`
}

// watchOf is g as it travels.
func watchOf(g engine.GeneratorSummary) *Watch {
	return &Watch{Ticks: g.Ticks, SaturatedTicks: g.SaturatedTicks, Rate: g.Rate, Signals: g.Signals, MaxLag: g.MaxLag, PeakCPU: g.PeakCPU, MaxWait: g.MaxWait, MaxReadDelay: g.MaxReadDelay,
		PeakMachine: max(g.PeakMachine, 0), MachineSpared: g.MachineSpared}
}

// sumWatches is the run's generator over every agent's last watch: ticks,
// saturated ticks, signals and saturated rates summed, the largest lag,
// the peak CPU, the largest wait and read delay of any one agent; ok false when no
// agent sent a watch.
func sumWatches(ws []*Watch) (g engine.GeneratorSummary, ok bool) {
	g.PeakCPU, g.PeakMachine = -1, -1
	for _, w := range ws {
		if w == nil {
			continue
		}
		ok = true
		g.Ticks += w.Ticks
		g.SaturatedTicks += w.SaturatedTicks
		g.Rate += w.Rate
		for k, n := range w.Signals {
			if g.Signals == nil {
				g.Signals = map[string]int{}
			}
			g.Signals[k] += n
		}
		g.MaxLag = max(g.MaxLag, w.MaxLag)
		g.PeakCPU = max(g.PeakCPU, w.PeakCPU)
		if w.PeakMachine > 0 {
			g.PeakMachine = max(g.PeakMachine, w.PeakMachine)
		}
		g.MachineSpared += w.MachineSpared
		g.MaxWait = max(g.MaxWait, w.MaxWait)
		g.MaxReadDelay = max(g.MaxReadDelay, w.MaxReadDelay)
	}
	return g, ok
}

// Offer is the controller's committed offer and each agent's share of it.
type Offer struct {
	Seq    uint64             `json:"seq"`
	Offer  float64            `json:"offer"`
	Shares map[string]float64 `json:"shares"`
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own types always marshal
	}
	return b
}
