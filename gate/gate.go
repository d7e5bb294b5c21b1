package gate

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/throttlekit/throttle/clock"
)

// Mode says what the offer counts.
type Mode uint8

const (
	// Rate: the offer is admissions per second; fractions are kept.
	Rate Mode = iota
	// Concurrency: the offer is permits in flight; it is a whole number.
	Concurrency
)

// String returns "rate" or "concurrency".
func (m Mode) String() string {
	switch m {
	case Rate:
		return "rate"
	case Concurrency:
		return "concurrency"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// DefaultBurst is how far the rate schedule may lag the clock unless
// WithBurst says otherwise: 2 ms. Go's timers on Linux often wake a waiter up
// to 1 ms late (the poller sleeps in whole milliseconds), so a window of 1 ms
// would lose that lateness from the schedule again and again (measured: 7 %
// short at 200 000/s, 2 % at 2 000/s); 2 ms absorbs it. The burst after an
// idle period, 1 + ⌊offer × 2 ms⌋ admissions, stays small: 1 at up to 499/s,
// 401 at 200 000/s.
const DefaultBurst = 2 * time.Millisecond

// maxWhole is the largest concurrency value the gate accepts: every whole
// number up to it is exact in a float64.
const maxWhole = 1 << 53

// maxSpareWaiters bounds how many idle waiters a gate keeps for reuse.
const maxSpareWaiters = 1024

// Config is what a gate enforces. All values are in the mode's unit
// (admissions per second, or permits in flight).
type Config struct {
	Mode Mode
	// Floor is the lowest offer Apply applies; it must be > 0.
	Floor float64
	// Ceiling is the authored value, the highest offer Apply applies; it
	// must be >= Floor.
	Ceiling float64
	// Offer is the offer in force when the gate starts, in [Floor, Ceiling].
	Offer float64
}

// Option configures a Gate.
type Option func(*Gate)

// WithClock replaces the wall clock (tests pass a clock.Fake). Timers for
// waiting in rate mode come from it too.
func WithClock(c clock.Clock) Option { return func(g *Gate) { g.clock = c } }

// WithBurst sets how far the rate schedule may lag the clock (default
// DefaultBurst); see the package doc. 0 means no burst at all. Concurrency
// mode ignores it.
func WithBurst(d time.Duration) Option { return func(g *Gate) { g.burst = d } }

// Gate admits iterations at its offer. It is safe for concurrent use. The
// zero Gate is not usable: make one with New.
//
// Invariants, all under mu: floor <= offer <= ceiling; in concurrency mode
// offer is whole and limit == int64(offer); the queue holds exactly the
// waiters not yet granted nor cancelled, in arrival order.
type Gate struct {
	clock clock.Clock
	epoch time.Time // instant 0 of the gate's nanosecond arithmetic
	mode  Mode
	floor float64
	burst time.Duration

	mu      sync.Mutex
	ceiling float64
	offer   float64

	// Rate schedule: admission k since the anchor is due at
	// anchor + k*intervalNs (nanoseconds since epoch).
	intervalNs float64
	anchor     int64
	k          float64
	idle       bool  // no schedule yet: the first admission (or Begin) starts it
	until      int64 // no admission is due at or after it (End); MaxInt64 for none

	// Concurrency permits: slots[i] is the generation of slot i, odd while a
	// permit holds it. A Permit carries (slot, generation) and releases only
	// if the generation still matches, so a second Release of it, or of a
	// copy, finds the generation moved on and does nothing.
	limit    int64
	inFlight int64
	slots    []uint64
	freed    []uint32

	head, tail *waiter
	waiting    int64
	spare      []*waiter

	admitted, cancelled uint64
	missed              uint64 // the admissions the schedule made due and never granted (Missed)
}

// New returns a gate enforcing cfg. It reports the first bad field of cfg, or
// a bad option, as an error naming it: non-finite values, Floor <= 0,
// Ceiling < Floor, Offer outside [Floor, Ceiling], non-whole or too large
// values in concurrency mode, a nil clock or a negative burst.
func New(cfg Config, opts ...Option) (*Gate, error) {
	g := &Gate{clock: clock.Real(), burst: DefaultBurst}
	for _, o := range opts {
		o(g)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if g.clock == nil {
		return nil, fmt.Errorf("gate: clock must not be nil")
	}
	if g.burst < 0 {
		return nil, fmt.Errorf("gate: burst must be >= 0, got %v", g.burst)
	}
	g.mode, g.floor, g.ceiling = cfg.Mode, cfg.Floor, cfg.Ceiling
	g.epoch = g.clock.Now()
	// Start idle: the first admission starts the schedule.
	g.idle, g.until = true, math.MaxInt64
	g.setOfferLocked(cfg.Offer, 0)
	return g, nil
}

func (c Config) validate() error {
	if c.Mode != Rate && c.Mode != Concurrency {
		return fmt.Errorf("gate: mode must be Rate or Concurrency, got %d", c.Mode)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"floor", c.Floor}, {"ceiling", c.Ceiling}, {"offer", c.Offer}} {
		if err := checkValue(c.Mode, f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case c.Floor <= 0:
		return fmt.Errorf("gate: floor must be > 0, got %v", c.Floor)
	case c.Ceiling < c.Floor:
		return fmt.Errorf("gate: ceiling (%v) must be >= floor (%v)", c.Ceiling, c.Floor)
	case c.Offer < c.Floor || c.Offer > c.Ceiling:
		return fmt.Errorf("gate: offer (%v) must be within [floor, ceiling] = [%v, %v]", c.Offer, c.Floor, c.Ceiling)
	}
	return nil
}

// checkValue rejects a value that is not finite, or not whole in concurrency
// mode.
func checkValue(mode Mode, name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("gate: %s must be a finite number, got %v", name, v)
	}
	if mode != Concurrency {
		return nil
	}
	if v != math.Trunc(v) {
		return fmt.Errorf("gate: %s must be a whole number in concurrency mode, got %v", name, v)
	}
	if v > maxWhole {
		return fmt.Errorf("gate: %s must be at most %d in concurrency mode, got %v", name, int64(maxWhole), v)
	}
	return nil
}

// Acquire blocks until the gate admits the caller or ctx ends. When ctx ends
// first it returns ctx.Err() and has consumed nothing: no token, no permit.
// A ctx already done fails at once even if an admission is free. When the
// admission and the end of ctx race, Acquire may return the admission.
//
// The caller must Release the permit in concurrency mode.
func (g *Gate) Acquire(ctx context.Context) (Permit, error) {
	if err := ctx.Err(); err != nil {
		g.mu.Lock()
		g.cancelled++
		g.mu.Unlock()
		return Permit{}, err
	}
	// Read the clock before taking the lock: it is the dearest part of an
	// admission (about 50 ns), and a reading a few nanoseconds old only
	// makes the admission as if the call came that much earlier.
	now := g.now()
	g.mu.Lock()
	if g.head == nil {
		if p, ok := g.admitLocked(now); ok {
			g.mu.Unlock()
			return p, nil
		}
	}
	return g.waitLocked(ctx, g.enqueueLocked())
}

// TryAcquire admits the caller if it can do so at once and reports whether it
// did. It never blocks, and it fails while others wait, so it never jumps the
// queue. Open-loop schedulers use it to count a dropped arrival instead of
// waiting.
func (g *Gate) TryAcquire() (Permit, bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.head != nil {
		return Permit{}, false
	}
	return g.admitLocked(now)
}

// now returns the clock's time in nanoseconds since the gate's epoch.
func (g *Gate) now() int64 { return int64(g.clock.Now().Sub(g.epoch)) }

// at converts nanoseconds since the epoch back to a time.
func (g *Gate) at(ns int64) time.Time { return g.epoch.Add(time.Duration(ns)) }

// admitLocked takes one admission at now if one is free.
func (g *Gate) admitLocked(now int64) (Permit, bool) {
	if g.mode == Rate {
		due := g.dueLocked(now)
		if due > now || due >= g.until {
			return Permit{}, false
		}
		g.k++
		g.admitted++
		return Permit{due: g.at(due)}, true
	}
	if g.inFlight >= g.limit {
		return Permit{}, false
	}
	return g.takeSlotLocked(now), true
}

// dueLocked returns when the next rate admission is due, starting the
// schedule at now if it has not started, and restarting it if it lags the
// clock by more than the burst window.
func (g *Gate) dueLocked(now int64) int64 {
	if g.idle {
		g.idle = false
		g.anchor, g.k = now, 0
		return now
	}
	due := g.dueAt(g.k)
	if due < now-int64(g.burst) && due < g.until {
		// Restart behind the caller: the schedule keeps its instants, but
		// the admissions owed that came due more than the burst window
		// before now are skipped, missed. The newest one owed is always
		// kept, so a caller is never sent away empty-handed; those kept are
		// granted at once, each with its own due instant. (A caller slower
		// than the offer restarts on every call: this path stays short.)
		from := now - int64(g.burst)
		first := math.Ceil(float64(from-g.anchor) / g.intervalNs) // the first due at or after from
		due = g.dueAt(first)
		switch { // settle on whole nanoseconds
		case due < from:
			first++
			due = g.dueAt(first)
		case first-1 > g.k && g.dueAt(first-1) >= from:
			first--
			due = g.dueAt(first)
		}
		if due > now { // none due within the window: keep the newest owed
			first--
			due = g.dueAt(first)
		}
		skipped := first - g.k
		if g.until != math.MaxInt64 { // those due at or after the end were never part of it
			skipped = math.Min(first, g.indexAt(g.until)) - g.k
		}
		g.missed += uint64(skipped)
		g.k = first
	}
	return due
}

// dueAt is when admission k of the schedule in force is due.
func (g *Gate) dueAt(k float64) int64 {
	off := k * g.intervalNs
	if off > 1<<62 { // a rate so low the next token is centuries away
		off = 1 << 62
	}
	return g.anchor + int64(off)
}

// indexAt is the first index from k on whose admission is due at or
// after t (math.Inf for t = MaxInt64, no end).
func (g *Gate) indexAt(t int64) float64 {
	if t == math.MaxInt64 {
		return math.Inf(1)
	}
	j := math.Max(math.Ceil(float64(t-g.anchor)/g.intervalNs), g.k)
	for j > g.k && g.dueAt(j-1) >= t { // settle on whole nanoseconds
		j--
	}
	for g.dueAt(j) < t {
		j++
	}
	return j
}

// owedLocked counts the admissions of the schedule in force, from the next
// one (k) on, that are due at or before now (and before the schedule's
// end): granted to nobody yet.
func (g *Gate) owedLocked(now int64) float64 {
	if g.until != math.MaxInt64 {
		now = min(now, g.until-1)
	}
	if g.idle || g.dueAt(g.k) > now {
		return 0
	}
	last := math.Max(math.Floor(float64(now-g.anchor)/g.intervalNs), g.k)
	// Due times are whole nanoseconds (dueAt truncates): settle the last
	// one due on them, not on the float quotient.
	for g.dueAt(last+1) <= now {
		last++
	}
	for last > g.k && g.dueAt(last) > now {
		last--
	}
	return last - g.k + 1
}

// Behind reports how many rate admissions were due at or before at and
// have been granted to nobody: how far the callers are behind the schedule
// at that instant (0 in concurrency mode, before the schedule starts, and
// for an instant before the next admission is due). It changes nothing.
// With Missed it closes the account of the schedule; see Missed.
func (g *Gate) Behind(at time.Time) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mode != Rate {
		return 0
	}
	return uint64(g.owedLocked(int64(at.Sub(g.epoch))))
}

// Missed counts the rate admissions the schedule made due that no caller
// was ever granted: those a restart skipped (see Burst in the package doc)
// when the callers were later than the burst window, plus those an offer
// change dropped from a lagging schedule. An open-loop scheduler that
// always waits at the gate misses only when it falls behind: they are
// the arrivals a generator asked for and never made. A gate whose callers
// come and go also misses over its idle periods.
//
// The account of the schedule is exact: at every instant t,
//
//	Admitted + Missed + Behind(t) = the admissions the schedule made due up to t
//
// where the schedule starts at Begin (or at the first admission) with
// admission 0, makes admission k due k/offer later at a constant offer,
// and makes none due from End on: ⌊(t − start) × offer⌋ + 1 of them by
// t before the end. An offer change carries
// the admissions owed at the old offer over to the new one (in tokens, as
// many as the burst window holds at the new offer; the rest are missed).
// Missed is 0 in concurrency mode. Stats has it too.
func (g *Gate) Missed() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.missed
}

// End ends the rate schedule at at: no admission due at or after at is
// granted, nor counted missed (a waiter waits until its context ends);
// those due before it are granted, missed or owed as before. An earlier
// End stands: the schedule ends at the earliest. An open-loop phase ends
// its schedule at its duration, as k6 starts iterations at k/rate for
// t < duration only, and again when it stops early. Concurrency mode
// ignores it.
func (g *Gate) End(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mode == Rate {
		g.until = min(g.until, int64(at.Sub(g.epoch)))
	}
}

// Begin starts the rate schedule at at: admission 0 is due then, and
// admission k at k/offer after it. Without Begin the schedule starts at
// the first admission, when it is called. A caller that comes more than
// the burst window after at finds the schedule restarted, the admissions
// it skipped missed (an open-loop phase begins its schedule at its own
// start, so a scheduler that starts late is late, not shifted). Calling
// Begin on a running schedule counts what it owed as missed and starts
// afresh. Concurrency mode ignores it.
func (g *Gate) Begin(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mode != Rate {
		return
	}
	ns := int64(at.Sub(g.epoch))
	g.missed += uint64(g.owedLocked(ns))
	g.idle = false
	g.anchor, g.k = ns, 0
}

// takeSlotLocked grants a concurrency permit.
func (g *Gate) takeSlotLocked(now int64) Permit {
	var i uint32
	if n := len(g.freed); n > 0 {
		i = g.freed[n-1]
		g.freed = g.freed[:n-1]
	} else {
		i = uint32(len(g.slots))
		g.slots = append(g.slots, 0)
	}
	g.slots[i]++ // odd: held
	g.inFlight++
	g.admitted++
	return Permit{g: g, due: g.at(now), slot: i, gen: g.slots[i]}
}

// Apply sets the offer, clamped to [Floor, Ceiling] and, in concurrency mode,
// rounded down to a whole number, and returns the offer it applied. It takes
// effect at once (see the package doc). A NaN offer changes nothing and
// returns the offer in force. Apply is the governor's Applier.
func (g *Gate) Apply(offer float64) (applied float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if math.IsNaN(offer) {
		return g.offer
	}
	g.setOfferLocked(offer, g.now())
	return g.offer
}

// SetCeiling changes the authored value mid-run and re-clamps the offer to
// it, returning the offer in force afterwards. Raising the ceiling does not
// raise the offer; that is the governor's call. It reports an error, and
// changes nothing, for a ceiling that is not finite, is below Floor, or is
// not a whole number in concurrency mode.
func (g *Gate) SetCeiling(c float64) (applied float64, err error) {
	if err := checkValue(g.mode, "ceiling", c); err != nil {
		return g.Offer(), err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c < g.floor {
		return g.offer, fmt.Errorf("gate: ceiling (%v) must be >= floor (%v)", c, g.floor)
	}
	g.ceiling = c
	if g.offer > c {
		g.setOfferLocked(c, g.now())
	}
	return g.offer, nil
}

// setOfferLocked clamps and installs offer, re-scheduling the rate schedule
// so the change holds from now on, and admits waiters the new offer lets in.
func (g *Gate) setOfferLocked(offer float64, now int64) {
	offer = math.Min(math.Max(offer, g.floor), g.ceiling)
	if g.mode == Concurrency {
		offer = math.Floor(offer)
		g.offer, g.limit = offer, int64(offer)
		if g.head != nil && g.inFlight < g.limit {
			g.grantLocked(now, false)
		}
		return
	}
	if offer == g.offer {
		return
	}
	interval := 1e9 / offer
	if g.offer > 0 && !g.idle {
		// Keep the part of the current interval already waited, in
		// tokens: lead/old interval == lead'/new interval. A schedule
		// that lags keeps its few saved tokens as tokens, never as time,
		// so a rise multiplies nothing.
		lead := float64(g.dueLocked(now)-now) * interval / g.intervalNs
		lead = math.Max(lead, -float64(g.burst))
		lead = math.Min(lead, interval)
		owed := g.owedLocked(now)
		g.anchor, g.k, g.intervalNs = now+int64(lead), 0, interval
		// The account stays exact (Missed): the admissions owed at the old
		// offer are owed at the new one, bar those the burst window
		// clamped away (missed) and never one more (rounding).
		if owedNew := g.owedLocked(now); owedNew < owed {
			g.missed += uint64(owed - owedNew)
		} else {
			g.k = owedNew - owed
		}
	}
	g.offer, g.intervalNs = offer, interval
	if g.head != nil {
		g.grantLocked(now, true)
	}
}

// Offer returns the offer in force.
func (g *Gate) Offer() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.offer
}

// Stats is a snapshot of a gate's live figures.
type Stats struct {
	Mode    Mode
	Offer   float64 // the offer in force
	Floor   float64
	Ceiling float64 // the authored value
	// InFlight is how many concurrency permits are unreleased; always 0 in
	// rate mode, where a permit holds nothing.
	InFlight int64
	// Waiting is how many Acquire calls are queued.
	Waiting int64
	// Admitted counts admissions, by Acquire and TryAcquire, since New.
	Admitted uint64
	// Cancelled counts Acquire calls that returned their context's error.
	Cancelled uint64
	// Missed counts rate admissions the schedule made due and never
	// granted (Gate.Missed, where the account is stated).
	Missed uint64
}

// Stats returns the gate's live figures, read at one instant.
func (g *Gate) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{
		Mode:      g.mode,
		Offer:     g.offer,
		Floor:     g.floor,
		Ceiling:   g.ceiling,
		InFlight:  g.inFlight,
		Waiting:   g.waiting,
		Admitted:  g.admitted,
		Cancelled: g.cancelled,
		Missed:    g.missed,
	}
}
