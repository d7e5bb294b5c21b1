package governor

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
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

// Window is the record of one closed window: the evidence gathered at one
// committed offer and what it decided. Hosts draw timelines and reports from
// these without re-deriving anything.
//
// A no-evidence hold is recorded too, but it does not end the window: the
// window keeps collecting at the same offer, and the record that finally
// judges it spans from the same Start.
type Window struct {
	Start, End time.Time
	// Offer is the committed offer the window was judged at.
	Offer      float64
	OK, Failed uint64
	// Frac is Failed / (OK + Failed), 0 when the window resolved nothing.
	Frac     float64
	Decision Decision
	// Streak is the congestion-memory streak after the window.
	Streak int
	// Early is true for a window closed before its full duration by an
	// early breach (WithEarlyBreach): its evidence showed a failure fraction
	// above High with confidence, so the back-off did not wait.
	Early bool
	// Tail is, for a breach judged on the window's tail alone (its newest
	// evidence, see WithEarlyBreach), how long that tail was; Frac is then
	// the tail's fraction, while OK and Failed still count the whole window.
	// 0 for every other window.
	Tail time.Duration

	// The evidence beyond failed attempts (WithEvidence), all zero when the
	// host's Counters do not implement LoadCounters.
	//
	// FailFrac is Failed / (OK + Failed), the attempt-failure fraction
	// alone; Frac is the fraction the window was judged on, which also
	// holds what the kinds of evidence below added.
	FailFrac float64
	// Dropped counts arrivals the host could not start during the window,
	// Queued the growth of in-flight attempts over it (negative when they
	// fell), Unserved what of both entered Frac (rate mode: Dropped plus
	// Queued when it grew; 0 when generator-saturated or switched off).
	Dropped  uint64
	Queued   int64
	Unserved uint64
	// Latency is the mean latency of the window's resolved attempts,
	// Baseline the run's low-load baseline it was compared with and
	// Inflation their ratio (concurrency mode, EvidenceLatency).
	Latency, Baseline time.Duration
	Inflation         float64
	// Waiting is, in concurrency mode, the share of the in-flight
	// iterations that only waited: the latency's excess over the baseline
	// divided by the loop's cycle (response plus think time, by Little's
	// law offer × span / resolved). Without think time it is
	// 1 − 1/Inflation; with a second of think time a 0.1 ms excess is a
	// ten-thousandth. 0 when latency was not judged or within the noise.
	Waiting float64
	// GeneratorSaturated is true when the host said it was saturated at
	// any tick of the window.
	GeneratorSaturated bool
	// Quick is true for a window judged before it held the seed's evidence
	// (its full Window and MinAttempts attempts): a clean multiplicative
	// climb or a breach beyond doubt (WithQuickClimb).
	Quick bool
	// Drained is how long the window's start waited, after the settle
	// span, for attempts started before a back-off to resolve.
	Drained time.Duration
	// By names the evidence that decided the window when it was not failed
	// attempts alone: "unserved", "latency" or "generator"; "" otherwise.
	By string
	// Read is the evidence the window read: WithEvidence's set when the
	// host's Counters report Load, EvidenceNone when they do not.
	Read Evidence
}

// State is a snapshot of the governor for live views.
type State struct {
	Offer   float64 // committed offer (last confirmed), 0 before the first confirmation
	LastBad float64 // 0 while unexplored
	Streak  int
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

// checksPerTick is how many times a tick Run reads the counters while the
// early breach is on: a gross breach on a busy target is cut after a fifth
// of a tick instead of a whole one. Never more often than every minCheck:
// a finer read only burns CPU.
const (
	checksPerTick = 5
	minCheck      = time.Millisecond
)

// earlyEvidence is, in MinAttempts, how many attempts let an early breach
// rest on less than a tick of evidence: the fraction it backs off by is
// then good to about one attempt in a hundred.
const earlyEvidence = 5

// earlyAlpha is the chance, per window, that the early breach cuts short a
// window whose true fraction is at High.
const earlyAlpha = 0.01

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
}

// New returns a governor for one phase. It fails if the limits do not
// validate.
func New(l Limits, c Counters, opts ...Option) (*Governor, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("governor: counters are required")
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
		return nil, fmt.Errorf("governor: tick must be > 0, got %v", g.tick)
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
		return nil, fmt.Errorf("governor: settle must be >= 0, got %v", g.settle)
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
	return State{Offer: g.offer, LastBad: g.lastBad, Streak: g.streak, Pending: g.pending, Last: g.last, Windows: g.windows}
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

// Tick is one read of the counters at time now. When it returns ok, the
// caller must write ask to the control path (origin Governor) and later pass
// the confirmation to Confirm; until then Tick gathers no evidence. The first
// Tick asks for the start offer.
func (g *Governor) Tick(now time.Time) (ask float64, ok bool) {
	g.mu.Lock()
	if !g.started {
		g.started, g.pending, g.asked = true, true, g.limits.Start
		g.mu.Unlock()
		return g.limits.Start, true
	}
	if g.pending {
		g.mu.Unlock()
		return 0, false
	}
	okN, failN := g.counters.Attempts()
	ld := g.readLoad(okN, failN)
	if !g.settleUntil.IsZero() {
		// Run schedules its ticks from the confirmation, so with the default
		// settle span (one tick) the span ends exactly on a tick.
		if now.Before(g.settleUntil) {
			g.mu.Unlock()
			return 0, false
		}
		if g.drainFrom.IsZero() {
			g.drainFrom = now
		}
		// Drain: after a back-off, wait (at most drainBound windows) until
		// the attempts started at the old offer have resolved.
		if g.drainTarget > 0 && ld.resolved < g.drainTarget && now.Before(g.drainUntil) {
			g.mu.Unlock()
			return 0, false
		}
		// Settled: the window starts here, on evidence of the new offer only.
		g.settleUntil = time.Time{}
		g.restart(now, okN, failN, ld)
		g.mu.Unlock()
		return 0, false
	}
	if okN < g.baseOK || failN < g.baseFail || ld.Started < g.baseLoad.Started || ld.Dropped < g.baseLoad.Dropped || ld.Latency < g.baseLoad.Latency {
		// Counters went backwards (a host reset them): the window's evidence
		// is unknowable, so start it again.
		g.restart(now, okN, failN, ld)
		g.mu.Unlock()
		return 0, false
	}
	g.satSeen = g.satSeen || ld.GeneratorSaturated
	dOK, dFail := okN-g.baseOK, failN-g.baseFail
	n := dOK + dFail
	w := Window{Start: g.winStart, End: now, Offer: g.offer, OK: dOK, Failed: dFail, Drained: g.drained}
	if g.loadc != nil {
		w.Read = g.evidence
	}
	if n > 0 {
		w.FailFrac = float64(dFail) / float64(n)
	}
	damaged := g.evidenceOf(&w, ld)
	// n counts what the fraction rests on: resolved attempts plus the
	// unserved load that entered it.
	n += w.Unserved
	if n > 0 {
		w.Frac = float64(damaged) / float64(n)
	}
	if w.Unserved > 0 && g.class(w.Frac) != g.class(w.FailFrac) {
		w.By = "unserved"
	}
	// A read within half a read of the window's end closes it: reads
	// jitter, and waiting for the next one would stretch the window by a
	// whole read. End − Start is what the window really covered.
	full := !now.Before(g.winStart.Add(g.limits.Window - g.check/2))
	tail := g.tail(now, okN, failN, ld)
	frac, breach := g.earlyFrac(w.Frac, damaged, n, now.Sub(g.winStart), tail)
	if full && breach && frac > w.Frac {
		// The read that closes the window judges its tail first too: a
		// target that changed in the window's last read would otherwise be
		// judged on evidence mostly gathered before the change.
		w.Frac, w.Tail = frac, tail.span
	}
	// A window short of its full length or of MinAttempts is judged now only
	// by the quick climb (clean evidence enough for a multiplicative climb)
	// or, once full, on a breach beyond doubt (see quick.go).
	short := n < g.limits.MinAttempts
	quick := !breach && !w.GeneratorSaturated && g.quickReady(damaged, n, now.Sub(g.winStart))
	clear := full && short && g.clearBreach(damaged, n)
	var d Decision
	switch {
	case !full && breach:
		// Inside the window only a gross breach is decided: one that the
		// evidence shows with confidence, and that moves the offer (a
		// breach at the floor waits for the full window like any hold).
		d = Decide(frac, g.offer, g.lastBad, g.limits)
		if d.Offer == g.offer {
			g.mu.Unlock()
			return 0, false
		}
		w.Early = true
		if frac != w.Frac {
			w.Frac, w.Tail = frac, tail.span
		}
		g.streak, _ = MemoryClearStep(g.streak, false)
		g.lastBad = d.LastBad
	case (!full || short) && !quick && !clear, (!full || short) && !clear && !g.climbs(&w, ld, n):
		if !full || now.Before(g.holdAt) {
			g.mu.Unlock()
			return 0, false // keep collecting
		}
		// A no-evidence hold: visible, and it breaks the memory streak, but it
		// discards nothing. The window goes on collecting at the same offer,
		// so a slow offer (1/s with 20 attempts needed) is judged once it has
		// the evidence instead of holding forever.
		g.streak = 0
		g.holdAt = now.Add(noEvidenceSpan * g.limits.Window)
		d = Decision{Kind: KindHold, Signal: SignalNoEvidence, From: g.offer, Offer: g.offer, LastBad: g.lastBad}
	case w.GeneratorSaturated && g.evidence&EvidenceGenerator != 0 && w.Frac <= g.limits.High:
		// The host could not deliver the offer: nothing this window saw
		// says where the target's limit is, so hold, and break the streak.
		g.streak = 0
		w.By = "generator"
		d = Decision{Kind: KindHold, Signal: SignalGeneratorSaturated, From: g.offer, Offer: g.offer, LastBad: g.lastBad}
	default:
		w.Quick = !full || short
		g.latencyKnee(&w, ld, n)
		d = Decide(w.Frac, g.offer, g.lastBad, g.limits)
		qualifies := w.Frac <= g.limits.Low && g.lastBad > 0 && g.offer >= g.lastBad
		var clears bool
		g.streak, clears = MemoryClearStep(g.streak, qualifies)
		if clears {
			d.LastBad = 0
			d.Signal = SignalMemoryCleared
		}
		g.lastBad = d.LastBad
	}
	w.Decision, w.Streak = d, g.streak
	g.last = d
	g.windows++
	switch {
	case d.Signal == SignalNoEvidence:
		// The window goes on: nothing restarts.
	case d.Offer != g.offer:
		g.pending, g.asked = true, d.Offer
	default:
		g.restart(now, okN, failN, ld)
	}
	g.mu.Unlock()

	g.logWindow(w, n)
	if g.observe != nil {
		g.observe(w)
	}
	if d.Offer != w.Offer {
		return d.Offer, true
	}
	return 0, false
}

// earlyLevel is the chance each of the early breach's tests may take of
// cutting short, by chance, a window whose true fraction is High. Each read
// looks twice (the tail, the window so far), so a window looks up to
// 2 × window/check times; earlyAlpha over that many looks (Bonferroni) keeps
// a window at High from being cut short more often than earlyAlpha, however
// finely it is read: 0.0002 a test for a 5 s window read every 200 ms.
func earlyLevel(window, check time.Duration) float64 {
	return earlyAlpha / (2 * math.Ceil(float64(window)/float64(check)))
}

// tailBelow reports whether P(X >= k) < alpha for X ~ Binomial(n, p),
// 0 < p < 1. It is the early breach's test: k damaged of n is a breach with
// confidence when so many would be this unlikely at a true fraction of
// High. (A normal-approximation bound, such as Wilson's, is several times
// too generous this far into a skewed binomial's tail: with it, 2 to 4.4 % of
// windows at a true 5 % were cut short where 1 % was asked for.) Above the
// mean the terms of the tail fall from the first on, each by at most the
// first ratio, so the first term and that geometric bound settle nearly
// every call without summing.
func tailBelow(k, n uint64, p, alpha float64) bool {
	if k == 0 || float64(k) <= float64(n)*p {
		return false // at or below the mean: never a breach
	}
	first := binomialPMF(k, n, p)
	if first >= alpha {
		return false
	}
	ratio := float64(n-k) / float64(k+1) * p / (1 - p)
	if first/(1-ratio) < alpha {
		return true
	}
	return binomialTail(k, n, p) < alpha
}

// binomialPMF is P(X = k) for X ~ Binomial(n, p), computed in log space.
func binomialPMF(k, n uint64, p float64) float64 {
	nf, kf := float64(n), float64(k)
	lgN, _ := math.Lgamma(nf + 1)
	lgK, _ := math.Lgamma(kf + 1)
	lgNK, _ := math.Lgamma(nf - kf + 1)
	return math.Exp(lgN - lgK - lgNK + kf*math.Log(p) + (nf-kf)*math.Log1p(-p))
}

// binomialTail is P(X >= k) for X ~ Binomial(n, p), k above the mean,
// summed term by term from k until the terms no longer add to it.
func binomialTail(k, n uint64, p float64) float64 {
	nf, odds := float64(n), p/(1-p)
	sum, term := 0.0, binomialPMF(k, n, p)
	for i := float64(k); i <= nf && term >= 1e-16*sum; i++ {
		sum += term
		term *= (nf - i) / (i + 1) * odds
	}
	return math.Min(1, sum)
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

// class is a fraction's class: 0 clean, 1 dead band, 2 breach.
func (g *Governor) class(frac float64) int {
	switch {
	case frac > g.limits.High:
		return 2
	case frac > g.limits.Low:
		return 1
	}
	return 0
}

// readLoad reads the host's Load when its counters report one; the zero
// load otherwise. Started is read after the attempt counts (LoadCounters'
// contract), so in flight is never negative.
func (g *Governor) readLoad(okN, failN uint64) load {
	if g.loadc == nil {
		return load{}
	}
	return load{Load: g.loadc.Load(), resolved: okN + failN}
}

// evidenceOf fills w's unserved-load fields from the tick's load ld and
// returns the damaged count the window's fraction rests on: failed
// attempts, plus the unserved load in rate mode (EvidenceUnserved) unless
// the host said it was saturated (EvidenceGenerator).
func (g *Governor) evidenceOf(w *Window, ld load) (damaged uint64) {
	damaged = w.Failed
	if g.loadc == nil {
		return damaged
	}
	w.GeneratorSaturated = g.satSeen
	var unserved uint64
	w.Dropped, w.Queued, unserved = g.unserved(g.baseLoad, ld)
	if !g.countsUnserved() {
		return damaged
	}
	w.Unserved = unserved
	return damaged + w.Unserved
}

// countsUnserved reports whether unserved load enters the current window's
// fraction: in rate mode, with EvidenceUnserved, unless the host said it
// was saturated at a tick of the window (then it is the host's shortfall,
// not the target's).
func (g *Governor) countsUnserved() bool {
	if g.loadc == nil || g.limits.Mode != Rate || g.evidence&EvidenceUnserved == 0 {
		return false
	}
	return !g.satSeen || g.evidence&EvidenceGenerator == 0
}

// unserved returns the arrivals dropped and the growth of in flight between
// the reads from and to, and what of both is unserved load: the drops plus
// the growth beyond in flight's own jitter. In flight jitters by about
// offer × latency from one tick to the next (Little's law, at the low-load
// baseline), plus one: growth within that is noise, not a queue.
func (g *Governor) unserved(from, to load) (dropped uint64, queued int64, unserved uint64) {
	dropped = to.Dropped - from.Dropped
	queued = int64(to.inFlight()) - int64(from.inFlight())
	noise := 1 + int64(g.offer*g.baseline.Seconds())
	return dropped, queued, dropped + uint64(max(0, queued-noise))
}

// tailEvidence is the evidence of a window's tail: what resolved (and, when
// it counts, went unserved) since the read the tail starts at.
type tailEvidence struct {
	span       time.Duration
	damaged, n uint64
}

// read is the counters as one of Run's reads saw them.
type read struct {
	at       time.Time
	ok, fail uint64
	ld       load
}

// tail returns the window's tail at now: the evidence since the newest
// earlier read that leaves enough for an early breach (see enough), or the
// whole window when none does. It then records now's read and forgets the
// reads a later tail can no longer start from: those before the newest read
// a tick or more old.
func (g *Governor) tail(now time.Time, okN, failN uint64, ld load) tailEvidence {
	from := read{at: g.winStart, ok: g.baseOK, fail: g.baseFail, ld: g.baseLoad}
	for i := len(g.reads) - 1; i >= 0; i-- {
		if r := g.reads[i]; g.enough(okN+failN-r.ok-r.fail, now.Sub(r.at)) {
			from = r
			break
		}
	}
	g.reads = append(g.reads, read{at: now, ok: okN, fail: failN, ld: ld})
	for i := len(g.reads) - 1; i > 0; i-- {
		if now.Sub(g.reads[i].at) >= g.tick {
			g.reads = append(g.reads[:0], g.reads[i:]...)
			break
		}
	}
	t := tailEvidence{span: now.Sub(from.at), damaged: failN - from.fail, n: okN - from.ok + failN - from.fail}
	if g.countsUnserved() {
		_, _, u := g.unserved(from.ld, ld)
		t.damaged += u
		t.n += u
	}
	return t
}

// earlyFrac decides the early breach at a read of a window whose evidence
// so far is damaged of n (fraction frac) gathered over span, and whose tail
// is tail. It returns the fraction the seed's back-off applies to and
// whether the window breaches early. A stretch breaches when it holds
// enough evidence (see enough) and so much damage would be less likely than
// g.alpha at a true fraction of High (see tailBelow). The tail comes first: when it breaches and the evidence
// before it did not, the target changed inside the window, the older
// evidence dilutes the window's fraction, and a back-off on it would be too
// shallow (a second breach follows); the tail is evidence at the same
// committed offer, only newer. Otherwise the window's own fraction is used.
func (g *Governor) earlyFrac(frac float64, damaged, n uint64, span time.Duration, tail tailEvidence) (float64, bool) {
	breaches := func(damaged, n uint64, span time.Duration) bool {
		return g.enough(n, span) && tailBelow(damaged, n, g.limits.High, g.alpha)
	}
	if !g.early {
		return 0, false
	}
	if tail.n < n && breaches(tail.damaged, tail.n, tail.span) {
		// The tail decides alone when the evidence before it did not
		// breach: the target changed inside the window, and the older
		// evidence would dilute the fraction. When it breached too, the
		// whole window is the same breach on more evidence.
		if float64(damaged-tail.damaged) <= g.limits.High*float64(n-tail.n) {
			return float64(tail.damaged) / float64(tail.n), true
		}
		return frac, true
	}
	if breaches(damaged, n, span) || g.fewBreach(damaged, n) {
		return frac, true
	}
	return 0, false
}

// enough reports whether n attempts resolved over span are enough for an
// early breach to rest on: at least MinAttempts, and either earlyEvidence ×
// MinAttempts of them or a whole tick. A busy target is judged on a fifth
// of a tick; a slow one waits for a tick, as it did when the counters were
// read once a tick, so its back-off is not taken on a handful of attempts.
// (Resting it on MinAttempts at any read, once the exact test passes, made
// the tail of a window at 3.5 % breach on 7 failures of 23 and back off by
// 30 %, and the fraction of a slow-start overshoot judged on a dozen
// attempts moved where the offer settled: the simulated bars missed.)
func (g *Governor) enough(n uint64, span time.Duration) bool {
	return n >= g.limits.MinAttempts && (n >= earlyEvidence*g.limits.MinAttempts || span >= g.tick)
}

// latencyKnee folds the latency knee into a judged window's fraction
// (concurrency mode, EvidenceLatency) and keeps the run's low-load
// baseline: the lowest mean latency of any window with evidence (MinAttempts
// attempts, or the quick climb's) whose failures stayed at or below High.
// A quick window's latency counts: the climb from the floor is where the
// low-load latency is seen, and a queue it climbs into must stop it.
func (g *Governor) latencyKnee(w *Window, ld load, n uint64) {
	resolved := w.OK + w.Failed
	if g.loadc == nil || resolved == 0 {
		return
	}
	w.Latency = (ld.Latency - g.baseLoad.Latency) / time.Duration(resolved)
	if g.evidence&EvidenceLatency == 0 || (n < g.limits.MinAttempts && !w.Quick) || w.Latency <= 0 {
		return
	}
	if w.FailFrac <= g.limits.High && (g.baseline == 0 || w.Latency < g.baseline) {
		g.baseline = w.Latency
	}
	if g.baseline == 0 {
		return
	}
	w.Baseline = g.baseline
	w.Inflation = float64(w.Latency) / float64(g.baseline)
	excess := w.Latency - g.baseline
	if g.limits.Mode == Rate && (excess < g.tick/standingQueueTicks || w.Inflation < standingQueueFactor ||
		float64(ld.inFlight()) < g.offer*excess.Seconds()/2) {
		// Rate mode: a queue that grows shows as unserved load; what latency
		// adds is the standing queue a back-off left behind, several-fold
		// deep. Less than standingQueueFactor × the baseline, or a delay
		// under a tenth of a tick, is the host's jitter at the governor's
		// time scale (a stalled generator delays attempts too; sub-millisecond
		// latencies inflate several-fold on a busy host), not a queue. So is
		// a delay the target's in flight does not show: a standing queue of
		// excess e at offer x holds about x·e attempts (Little's law), while
		// attempts a stalled host sent late were never in flight that long.
		return
	}
	if g.limits.Mode == Rate {
		// A standing queue of excess e at offer x holds about x·e attempts
		// (Little's law) against the x·span the window offered: q =
		// e/(e + span) is the share of the load that only waits, capped at
		// the seed's smallest trim (standingQueueMax). 1 − 1/I, the closed
		// loop's share, is never less than 3/4 here (I >= 4) and would
		// quarter the offer for any standing queue, however shallow.
		span := w.End.Sub(w.Start)
		if w.Queued < 0 {
			return // the queue is draining: this offer is below what the target serves
		}
		if q := min(excess.Seconds()/(excess+span).Seconds(), standingQueueMax); q > w.Frac {
			w.Frac, w.By = q, "latency"
		}
		return
	}
	if excess <= latencyFloor {
		return // the host's jitter on a fast answer, not a queue
	}
	// The closed loop's cycle, by Little's law: offer in-flight iterations
	// resolving resolved attempts over the window's span turn around every
	// offer × span / resolved, response time plus think time. The share of
	// the cycle spent waiting, excess/cycle, is the share of the in-flight
	// iterations that only wait; without think time it is 1 − 1/Inflation.
	cycle := time.Duration(float64(w.End.Sub(w.Start)) * g.offer / float64(resolved))
	cycle = max(cycle, w.Latency)
	w.Waiting = float64(excess) / float64(cycle)
	if frac, by := g.latencyFrac(w.Frac, 1/(1-w.Waiting)); by {
		w.Frac, w.By = frac, "latency"
	}
}

func (g *Governor) logWindow(w Window, n uint64) {
	d := w.Decision
	level := slog.LevelInfo
	if d.Kind == KindHold && d.Signal != SignalMemoryCleared {
		level = slog.LevelDebug
	}
	if !g.log.Enabled(context.Background(), level) {
		return
	}
	attrs := []any{
		"phase", g.phase,
		"offer", arrow(d.From, d.Offer),
		"signal", d.Signal.String(),
		"frac", pct(w.Frac),
		"low", pct(g.limits.Low),
		"high", pct(g.limits.High),
		"attempts", n,
		"last_bad", num(d.LastBad),
		"streak", w.Streak,
		"early", w.Early,
	}
	if w.Tail > 0 {
		attrs = append(attrs, "tail", sinceDur(w.Tail))
	}
	// The evidence beyond failed attempts, named when there is any, so a
	// reader can tell what moved the offer.
	if w.By != "" {
		attrs = append(attrs, "by", w.By)
	}
	if g.loadc != nil && g.evidence != EvidenceNone {
		attrs = append(attrs, "failed", pct(w.FailFrac))
		if w.Unserved > 0 {
			attrs = append(attrs, "unserved", w.Unserved, "dropped", w.Dropped, "queued", w.Queued)
		}
		if w.Inflation > 0 {
			attrs = append(attrs, "latency", sinceDur(w.Latency), "inflation", strconv.FormatFloat(w.Inflation, 'f', 2, 64))
		}
		if w.Drained > 0 {
			attrs = append(attrs, "drained", sinceDur(w.Drained))
		}
		if w.GeneratorSaturated {
			attrs = append(attrs, "generator_saturated", true)
		}
	}
	g.log.Log(context.Background(), level, "throttle", attrs...)
}

func arrow(from, to float64) string {
	if from == to {
		return num(to)
	}
	return num(from) + "→" + num(to)
}

// num prints an offer with at most two decimals and no exponent.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

func pct(f float64) string { return fmt.Sprintf("%.3g%%", f*100) }
