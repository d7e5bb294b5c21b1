package sim

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Controller decides the offer of a run from the run's cumulative attempt
// counters. A Controller serves one run; make a new one for each.
type Controller interface {
	// Name says which algorithm this is, for reports.
	Name() string
	// Begin starts the run at now with the run's counters and returns the
	// opening offer.
	Begin(now time.Time, c governor.Counters) (offer float64, err error)
	// Tick reads the counters at now, after the attempts of the tick that
	// ends at now resolved, and returns the offer in force until the next
	// tick.
	Tick(now time.Time) (offer float64)
	// Windows returns the windows closed so far, oldest first.
	Windows() []governor.Window
}

// Governor drives throttle's real governor (governor.Governor) through its
// exported Tick and Confirm with explicit times: when a tick asks for an
// offer, the Applier applies it at once and the governor is told the value
// that was applied, the way a Control would confirm it.
type Governor struct {
	name    string
	limits  governor.Limits
	opts    []governor.Option
	applier governor.Applier
	g       *governor.Governor
	offer   float64
	windows []governor.Window
}

// GovernorOption configures a Governor controller.
type GovernorOption func(*Governor)

// WithApplier makes a apply the governor's writes; the governor is told the
// value a returns, which may differ from the one asked. The default applies
// exactly what was asked.
func WithApplier(a governor.Applier) GovernorOption { return func(g *Governor) { g.applier = a } }

// WithGovernorOptions passes opts to governor.New, after the simulation's
// own (no settle span, a quiet logger, the window observer), so they can
// override them.
func WithGovernorOptions(opts ...governor.Option) GovernorOption {
	return func(g *Governor) { g.opts = append(g.opts, opts...) }
}

// Named sets the controller's name in reports (default "throttle").
func Named(name string) GovernorOption { return func(g *Governor) { g.name = name } }

// NewGovernor returns a controller running throttle's governor with limits l,
// with the governor's defaults (early breach on).
func NewGovernor(l governor.Limits, opts ...GovernorOption) *Governor {
	g := &Governor{name: "throttle", limits: l, applier: governor.ApplierFunc(func(x float64) float64 { return x })}
	for _, o := range opts {
		o(g)
	}
	return g
}

// SeedCadence is the name of the governor variant NewSeedGovernor runs.
const SeedCadence = "throttle, seed"

// NewSeedGovernor returns the governor exactly as the seed states it: early
// breach and quick climb off, so every decision waits for the full window
// and MinAttempts, and no evidence beyond failed attempts
// (governor.EvidenceNone).
func NewSeedGovernor(l governor.Limits, opts ...GovernorOption) *Governor {
	return NewGovernor(l, append([]GovernorOption{Named(SeedCadence),
		WithGovernorOptions(governor.WithEarlyBreach(false), governor.WithQuickClimb(false), governor.WithEvidence(governor.EvidenceNone))}, opts...)...)
}

// Name returns the controller's name: "throttle" unless Named said otherwise.
func (g *Governor) Name() string { return g.name }

// Begin builds the governor over c and applies its opening offer.
func (g *Governor) Begin(now time.Time, c governor.Counters) (float64, error) {
	// The model targets answer within the tick that sent the load and carry
	// no damage over from one offer to the next, so there is nothing to
	// settle: with WithSettle(0) the simulation runs the seed's rules
	// exactly as docs/design.md states them, which is what the bars are about.
	opts := append([]governor.Option{
		governor.WithSettle(0),
		governor.WithLogger(slog.New(slog.DiscardHandler)), // sweeps of thousands of runs stay quiet
		governor.WithObserver(func(w governor.Window) { g.windows = append(g.windows, w) }),
	}, g.opts...)
	gov, err := governor.New(g.limits, c, opts...)
	if err != nil {
		return 0, err
	}
	g.g = gov
	return g.Tick(now), nil
}

// Tick runs one governor tick and, when it asks for an offer, applies and
// confirms it at the same instant.
func (g *Governor) Tick(now time.Time) float64 {
	if ask, ok := g.g.Tick(now); ok {
		applied := g.applier.Apply(ask)
		g.g.Confirm(now, governor.Confirmation{Origin: governor.OriginGovernor, Asked: ask, Applied: applied})
		g.offer = applied
	}
	return g.offer
}

// Step returns how often the governor reads the counters (governor.Check):
// Run steps the simulation at that rate, as Run of the governor package
// ticks it. 1 s before Begin.
func (g *Governor) Step() time.Duration {
	if g.g == nil {
		return time.Second
	}
	return g.g.Check()
}

// Windows returns the governor's closed windows.
func (g *Governor) Windows() []governor.Window { return g.windows }

// State returns the governor's state (zero before Begin).
func (g *Governor) State() governor.State {
	if g.g == nil {
		return governor.State{}
	}
	return g.g.State()
}

// rule is a baseline's decision for one window with evidence: the window's
// failure fraction and the offer it was judged at give the next offer and
// the signal that names why (the governor's nearest signal).
type rule func(frac, offer float64) (next float64, signal governor.Signal)

// baseline is a window-by-window controller with the governor's window
// bookkeeping: a window closes once it lasted Limits.Window and holds
// Limits.MinAttempts resolved attempts; one still short at 4 × Window (and
// every 4 × Window after) records a no-evidence hold but keeps its evidence
// and goes on collecting; a window restarts whenever the offer changes. Only
// the rule differs.
type baseline struct {
	name    string
	limits  governor.Limits
	start   float64
	decide  rule
	c       governor.Counters
	offer   float64
	since   time.Time
	holdAt  time.Time // when a window short of attempts next records a no-evidence hold
	baseOK  uint64
	baseBad uint64
	windows []governor.Window
}

func (b *baseline) Name() string { return b.name }

func (b *baseline) Begin(now time.Time, c governor.Counters) (float64, error) {
	if err := b.limits.Validate(); err != nil {
		return 0, err
	}
	if c == nil {
		return 0, fmt.Errorf("sim: counters are required")
	}
	b.c, b.offer = c, b.start
	b.since, b.holdAt = now, now.Add(4*b.limits.Window)
	b.baseOK, b.baseBad = c.Attempts()
	return b.offer, nil
}

func (b *baseline) Tick(now time.Time) float64 {
	ok, bad := b.c.Attempts()
	elapsed := now.Sub(b.since)
	if elapsed < b.limits.Window {
		return b.offer
	}
	w := governor.Window{Start: b.since, End: now, Offer: b.offer, OK: ok - b.baseOK, Failed: bad - b.baseBad}
	n := w.OK + w.Failed
	if n > 0 {
		w.Frac = float64(w.Failed) / float64(n)
	}
	if n < b.limits.MinAttempts {
		if now.Before(b.holdAt) {
			return b.offer // keep collecting, as the governor does
		}
		w.Decision = governor.Decision{Kind: governor.KindHold, Signal: governor.SignalNoEvidence, From: b.offer, Offer: b.offer}
		b.windows = append(b.windows, w)
		b.holdAt = now.Add(4 * b.limits.Window)
		return b.offer
	}
	next, signal := b.decide(w.Frac, b.offer)
	next = math.Max(b.limits.Floor, math.Min(b.limits.Ceiling, next))
	w.Decision = governor.Decision{Kind: kind(b.offer, next), Signal: signal, From: b.offer, Offer: next}
	if w.Decision.Kind == governor.KindHold && signal != governor.SignalDeadBand && signal != governor.SignalNone {
		if signal == governor.SignalBackoff {
			w.Decision.Signal = governor.SignalAtFloor
		} else {
			w.Decision.Signal = governor.SignalAtCeiling
		}
	}
	b.windows = append(b.windows, w)
	b.offer, b.since, b.holdAt, b.baseOK, b.baseBad = next, now, now.Add(4*b.limits.Window), ok, bad
	return b.offer
}

func (b *baseline) Windows() []governor.Window { return b.windows }

func kind(from, to float64) governor.Kind {
	switch {
	case to > from:
		return governor.KindRaise
	case to < from:
		return governor.KindLower
	}
	return governor.KindHold
}

// NewAIMD returns additive-increase, multiplicative-decrease as adaptive
// concurrency limiters use it, on the governor's window classes: +1 per clean
// window (fraction at or below Limits.Low), ×0.9 on a breach (above
// Limits.High), hold in between. It opens at Limits.Start.
func NewAIMD(l governor.Limits) Controller {
	return &baseline{name: "aimd", limits: l, start: l.Start, decide: func(frac, x float64) (float64, governor.Signal) {
		switch {
		case frac > l.High:
			return x * 0.9, governor.SignalBackoff
		case frac > l.Low:
			return x, governor.SignalDeadBand
		}
		return x + 1, governor.SignalProbe
	}}
}

// NewRamp returns a linear ramp to failure, what a stepped arrival-rate test
// does: from Limits.Start it adds step per window until a window breaches
// (fraction above Limits.High), then steps back once and holds there for the
// rest of the run, whatever it sees.
func NewRamp(l governor.Limits, step float64) Controller {
	holding := false
	return &baseline{name: "ramp", limits: l, start: l.Start, decide: func(frac, x float64) (float64, governor.Signal) {
		switch {
		case holding:
			return x, governor.SignalNone
		case frac > l.High:
			holding = true
			return x - step, governor.SignalBackoff
		}
		return x + step, governor.SignalProbe
	}}
}

// NewFixed returns fixed load at the ceiling, what a fixed-rate tool does:
// the offer is Limits.Ceiling from the first tick to the last.
func NewFixed(l governor.Limits) Controller {
	return &baseline{name: "fixed", limits: l, start: l.Ceiling, decide: func(_, x float64) (float64, governor.Signal) {
		return x, governor.SignalNone
	}}
}
