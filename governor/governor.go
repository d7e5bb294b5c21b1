package governor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/throttlekit/throttle/clock"
)

// Counters are a host's cumulative attempt counters: every resolved attempt
// (including retries) counts once as ok or failed. Both only grow. In-flight
// attempts are not resolved and are not counted.
type Counters interface {
	Attempts() (ok, failed uint64)
}

// CountersFunc adapts a function to Counters.
type CountersFunc func() (ok, failed uint64)

// Attempts calls f.
func (f CountersFunc) Attempts() (ok, failed uint64) { return f() }

// State is a snapshot of the governor for live views.
type State struct {
	Offer   float64 // committed offer (last confirmed), 0 before the first confirmation
	LastBad float64 // 0 while unexplored
	Streak  int
	Outage  bool     // the target is out (outage.go): the offer holds until it answers again
	Pending bool     // a write is on its way to the gate
	Last    Decision // the newest window's decision
	Windows int      // windows closed so far
}

// Option configures a Governor.
type Option func(*Governor)

// WithClock replaces the wall clock (tests pass a clock.Fake).
func WithClock(c clock.Clock) Option { return func(g *Governor) { g.clock = c } }

// WithTick sets how often Run reads the counters (default
// DefaultTickFor(Limits.Window): min(1 s, window/5)). A tick longer than half
// the window leaves the window's end and any early breach at the mercy of
// tick boundaries; the CLI refuses one, the library allows it.
func WithTick(d time.Duration) Option { return func(g *Governor) { g.tick, g.tickSet = d, true } }

// WithEarlyBreach switches the early breach on or off (default on). With it
// on, Run reads the counters checksPerTick (5) times a tick, and a check
// inside a window whose evidence shows a failure fraction above High with
// confidence closes the window at once; the seed's back-off applies to that
// fraction. The evidence is the window's tail when the tail alone breaches
// and what came before it did not (the target changed), the window so far
// otherwise; it must hold MinAttempts attempts and either 5 × MinAttempts
// or a whole tick of them (see the package doc). The confidence is an exact
// binomial test whose level is corrected for how often a window looks, so
// that a window whose true fraction is at High is cut short less than 1 %
// of the time. Dead-band, probe and memory-clear decisions always wait for
// the full window (a clean multiplicative climb is WithQuickClimb's). Off
// gives the seed's exact cadence: one read a tick, and every decision waits
// for the full window (off also switches the quick climb off, unless
// WithQuickClimb says otherwise).
func WithEarlyBreach(on bool) Option { return func(g *Governor) { g.early = on } }

// WithLogger sets the logger for movement lines (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(g *Governor) { g.log = l } }

// WithPhase names the phase in log lines (default "main").
func WithPhase(name string) Option { return func(g *Governor) { g.phase = name } }

// WithObserver registers f to receive every closed window. It runs on the
// governor's loop, so it must return quickly.
func WithObserver(f func(Window)) Option { return func(g *Governor) { g.observe = f } }

// WithSettle sets how long after a confirmed change the governor discards
// evidence before the next window starts (default: one tick). Attempts that
// resolve just after a change were mostly sent at the old offer, and a
// target recovering from overload keeps failing for a moment after the load
// drops; counting either would judge the new offer on the old one's damage.
// 0 starts the window at the confirmation itself.
func WithSettle(d time.Duration) Option { return func(g *Governor) { g.settle, g.settleSet = d, true } }

// DefaultTick is the longest default tick: DefaultTickFor never exceeds it.
const DefaultTick = time.Second

// Check returns how often Run reads the counters: a fifth of the tick (but
// not under a millisecond, nor over the tick) with the early breach on, the
// tick with it off.
func (g *Governor) Check() time.Duration { return g.check }

// DefaultTickFor is the tick a window of length window gets unless told
// otherwise: min(1 s, window/5), so that a window spans at least five ticks
// and an early breach can be decided a fifth of the way in.
func DefaultTickFor(window time.Duration) time.Duration {
	if t := min(DefaultTick, window/5); t > 0 {
		return t
	}
	return window // a window of a few nanoseconds: one tick a window
}

// Governor is the per-phase governor: window bookkeeping over a host's
// cumulative attempt counters, plus the control path to the gate.
//
// It judges a window only on evidence gathered entirely at the committed
// offer: after every confirmed change it discards the attempts that resolve
// during a short settle span (WithSettle, one tick by default: they were
// mostly sent at the old offer), then restarts the window from a fresh
// snapshot of the counters. A window closes once it has lasted Limits.Window
// and holds at least Limits.MinAttempts resolved attempts (a clean climb
// sooner, WithQuickClimb); one still short at
// 4 × Window reports a no-evidence hold (and again every 4 × Window after)
// but keeps its evidence and goes on collecting. A closed window goes through Decide and
// MemoryClearStep; a move is written to the control path and the governor
// waits for its confirmation before it starts the next window.
//
// Run drives it from a ticker. Tick and Confirm are the same steps with time
// as a parameter, for hosts with their own loop and for exact tests. The
// methods are safe for concurrent use.
type Governor struct {
	limits   Limits
	counters Counters
	clock    clock.Clock
	tick     time.Duration
	tickSet  bool          // an explicit WithTick, so the default can follow the window
	check    time.Duration // how often Run reads the counters
	alpha    float64       // the early breach's level per look, corrected for a window's looks
	early    bool
	quick    bool // WithQuickClimb
	quickSet bool // an explicit WithQuickClimb; otherwise quick follows early
	evidence Evidence
	loadc    LoadCounters // counters as LoadCounters, nil when they are not
	log      *slog.Logger
	phase    string
	observe  func(Window)
	settle   time.Duration
	// settleSet records an explicit WithSettle, so the default can follow
	// the tick whatever order the options came in.
	settleSet bool

	mu          sync.Mutex
	settleUntil time.Time // when set, evidence is discarded until then (after a change)
	started     bool
	offer       float64
	lastBad     float64
	streak      int
	pending     bool
	asked       float64
	last        Decision
	windows     int
	winStart    time.Time
	holdAt      time.Time // when a window short of attempts next reports a no-evidence hold
	baseOK      uint64
	baseFail    uint64
	baseLoad    load // the Load read at the window's start
	// reads are the window's reads of the last tick or so, oldest first:
	// the early breach's tail starts at one of them (see tail).
	reads       []read
	satSeen     bool          // the host said it was saturated at a read of this window
	baseline    time.Duration // the lowest mean latency of a window with evidence
	drainTarget uint64        // after a back-off: resolved attempts the drain waits for
	drainUntil  time.Time     // the drain's bound
	drainFrom   time.Time     // when the settle span ended and the drain began
	drained     time.Duration // how long the current window's start waited for the drain
	// The outage (outage.go): out while the target is out; prev is the
	// decision before the last one, so that a back-off the outage's first
	// moments caused can be undone.
	out  bool
	prev Decision
	// lastUnreach: most of the last window's failures found no server.
	lastUnreach bool
	// perOffer is the last judged window's resolved attempts a second per
	// unit of its offer (fewBreach: how much evidence a window will hold).
	perOffer float64
}

// New returns a governor for one phase. It fails if the limits do not
// validate.
func New(l Limits, c Counters, opts ...Option) (*Governor, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("counters are required")
	}
	g := &Governor{limits: l, counters: c, clock: clock.Real(), early: true, quick: true, evidence: EvidenceAll, log: slog.Default(), phase: "main"}
	g.loadc, _ = c.(LoadCounters)
	for _, o := range opts {
		o(g)
	}
	if !g.tickSet {
		g.tick = DefaultTickFor(l.Window)
	}
	if !g.quickSet {
		g.quick = g.early
	}
	if g.tick <= 0 {
		return nil, fmt.Errorf("tick must be > 0, got %v", g.tick)
	}
	if !g.settleSet {
		g.settle = g.tick
	}
	g.check, g.alpha = g.tick, 0
	if g.early {
		g.check = min(g.tick, max(g.tick/checksPerTick, minCheck))
		g.alpha = earlyLevel(l.Window, g.check)
	}
	if g.settle < 0 {
		return nil, fmt.Errorf("settle must be >= 0, got %v", g.settle)
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g, nil
}

// Limits returns the phase's limits.
func (g *Governor) Limits() Limits { return g.limits }

// State returns a snapshot for live views.
func (g *Governor) State() State {
	g.mu.Lock()
	defer g.mu.Unlock()
	return State{Offer: g.offer, LastBad: g.lastBad, Streak: g.streak, Pending: g.pending, Last: g.last, Windows: g.windows, Outage: g.out}
}

// Run drives the governor until ctx ends: it asks for the start offer, then
// on every tick reads the counters and, when a window closes, decides and
// writes the decision to ctl. Confirmations from ctl are adopted as they
// arrive. Run returns nil when ctx ends; it does not close ctl.
func (g *Governor) Run(ctx context.Context, ctl *Control) error {
	t := g.clock.NewTicker(g.check)
	defer func() { t.Stop() }()
	if ask, ok := g.Tick(g.clock.Now()); ok {
		ctl.Set(OriginGovernor, ask)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C():
			if ask, ok := g.Tick(now); ok {
				ctl.Set(OriginGovernor, ask)
			}
		case c := <-ctl.Confirmations():
			// Ticks are scheduled from the confirmation: the settle span ends
			// on a tick, the next window starts there and closes on the tick
			// its duration later, instead of waiting for the next tick of an
			// unrelated schedule (up to a whole tick late at each end). The
			// ticker is renewed before Confirm so that a confirmed state
			// always has its new schedule.
			now := g.clock.Now()
			t.Stop()
			t = g.clock.NewTicker(g.check)
			g.Confirm(now, c)
		}
	}
}

// Start runs the governor on its own goroutine, writing through a new Control
// to a. stop ends the loop, waits for it and closes the Control; it is safe
// to call more than once. Hosts that own no context of their own use it
// instead of Run.
func (g *Governor) Start(a Applier) (ctl *Control, stop func()) {
	ctl = NewControl(a)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Run(ctx, ctl) // nil when ctx ends
	}()
	var once sync.Once
	return ctl, func() {
		once.Do(func() {
			cancel()
			<-done
			ctl.Close()
		})
	}
}

// Confirm adopts a confirmation from the control path at time now: the
// committed offer becomes the applied value and the window restarts from a
// fresh counter snapshot. A write of another origin (a user's) is adopted the
// same way and logged.
func (g *Governor) Confirm(now time.Time, c Confirmation) {
	okN, failN := g.counters.Attempts()
	g.mu.Lock()
	ld := g.readLoad(okN, failN)
	from, asked, wasPending := g.offer, g.asked, g.pending
	g.started = true
	g.offer = c.Applied
	g.pending = false
	g.restart(now, okN, failN, ld)
	g.drainTarget, g.drainFrom, g.drained = 0, time.Time{}, 0
	if g.loadc != nil && g.evidence&EvidenceDrain != 0 && wasPending && c.Applied < from && ld.Started > ld.resolved {
		// A back-off: the attempts in flight now were started at the old
		// offer; the next window waits for them.
		g.drainTarget = ld.Started
		g.drainUntil = now.Add(g.settle + drainBound*g.limits.Window)
	}
	settle := g.settle
	if g.quick && wasPending && c.Origin == OriginGovernor && c.Applied > from {
		// After a raise the answers still arriving were sent at the lower
		// offer: they can only make the new offer look cleaner than it is,
		// and a queue they leave shows as latency or in-flight growth, so
		// nothing is discarded (the quick climb would otherwise spend a
		// settle span on every doubling). After a back-off the span stays:
		// the old offer's damage is still resolving.
		settle = 0
	}
	if settle > 0 || g.drainTarget > 0 {
		g.settleUntil = now.Add(settle)
	}
	g.mu.Unlock()

	switch {
	case c.Origin != OriginGovernor:
		g.log.Info("throttle", "phase", g.phase, "offer", arrow(from, c.Applied), "signal", "adopted", "origin", c.Origin.String(), "asked", num(c.Asked))
	case wasPending && c.Applied != asked:
		g.log.Info("throttle", "phase", g.phase, "offer", arrow(from, c.Applied), "signal", "confirmed-other", "asked", num(asked))
	}
}

func (g *Governor) restart(now time.Time, okN, failN uint64, ld load) {
	if !g.drainFrom.IsZero() {
		g.drained = now.Sub(g.drainFrom)
	}
	g.drainFrom, g.drainTarget = time.Time{}, 0
	g.winStart, g.baseOK, g.baseFail, g.baseLoad, g.satSeen = now, okN, failN, ld, ld.GeneratorSaturated
	g.reads = append(g.reads[:0], read{at: now, ok: okN, fail: failN, ld: ld})
	g.holdAt = now.Add(noEvidenceSpan * g.limits.Window)
}
