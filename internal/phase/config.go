package phase

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
)

// Defaults Config's zero fields take.
const (
	// DefaultMaxWorkers bounds the open-loop worker pool.
	DefaultMaxWorkers = 1000
	// DefaultGrace is how long a stopping phase waits for in-flight
	// iterations before it aborts them.
	DefaultGrace = 5 * time.Second
	// ScheduleSlack is how late the open-loop scheduler may fall behind its
	// schedule and still run every arrival it missed (each with its own due
	// instant, so the lateness shows in the latency). A window of a
	// millisecond or two (gate.DefaultBurst) lost 3–5 % of the arrivals at
	// 200–400/s on a busy two-core machine, where a goroutine or timer is
	// often woken a few milliseconds late; 10 ms keeps the achieved rate at
	// the offer, and bounds the catch-up after a longer stall to offer ×
	// 10 ms arrivals.
	ScheduleSlack = 10 * time.Millisecond
	// MinRate is the lowest rate an authored rate schedule runs at: a stage
	// ramping to 0 still admits an arrival every 100 s, not none.
	MinRate = 0.01
	// RampStep is how often an authored schedule (Config.Ceiling) is read
	// and applied.
	RampStep = 250 * time.Millisecond
)

// Counters are a phase's cumulative attempt plane, written by its
// iterations (engine.Meter is one). The governor reads them as
// LoadCounters; the phase adds what only the schedule knows (dropped
// arrivals, schedule lag) and the generator watch's verdict.
type Counters interface {
	governor.LoadCounters
	// Drop counts an arrival no worker could start.
	Drop()
	// Miss counts n arrivals the schedule asked for that the scheduler
	// never made: it fell more than ScheduleSlack behind them (gate.Missed),
	// or the phase ended with them due and not taken. Neither sent nor
	// dropped, they close the account: the schedule's arrivals = started +
	// dropped + missed.
	Miss(n uint64)
	// Lag counts one arrival's schedule lag: how late a worker began it
	// after its intended start.
	Lag(d time.Duration)
	// LagTotal is the summed lag so far and how many arrivals it holds.
	LagTotal() (sum time.Duration, n uint64)
	// SetSaturated records a watch tick's verdict and the attempt rate
	// over the saturated ticks so far.
	SetSaturated(now bool, rate float64)
	// ReadDelay is the summed read delay so far (how long answers waited
	// in the kernel, after they arrived, for the generator to read them),
	// how many answers it holds and the longest; n stays 0 where no
	// transport reads the kernel's receive stamps (engine.Meter.ReadDelay).
	ReadDelay() (sum time.Duration, n uint64, longest time.Duration)
}

// Worker runs a phase's iterations one at a time (a URL worker, a script
// VU). It is used by one goroutine only.
type Worker interface {
	// Iterate runs one iteration that was due at due (open loop: the
	// arrival's intended start; closed loop: zero, "now").
	Iterate(due time.Time)
	// Close releases the worker's resources when the phase is done with it.
	Close()
}

// Iterations is a fixed amount of work run as authored (k6's
// per-vu-iterations and shared-iterations): Workers run back to back until
// Count iterations each (PerWorker) or Count in all are done.
type Iterations struct {
	Count     int
	PerWorker bool
	Workers   int
}

// Config describes one phase. Fields left zero take the defaults documented
// on them; Limits has no defaults here (build it with governor.NewLimits).
type Config struct {
	// Name names the phase in the governor's lines (governor.WithPhase);
	// "" for a lone phase.
	Name string
	// Limits bound the governor: the mode (open-loop Rate, closed-loop
	// Concurrency), ceiling, floor, start, high, low, window, min attempts.
	Limits governor.Limits
	// Governed lets the governor move the offer. Not governed, the offer
	// is the authored value (Ceiling, or Limits.Ceiling) all along; a
	// governor pinned there still judges and records the windows, so the
	// report has a timeline.
	Governed bool
	// Ceiling, if set, is the authored value at each moment of the phase
	// (a ramping executor's stages), read every RampStep. Governed, it
	// caps the offer (the offer never exceeds what the author would have
	// run then); not governed, the offer follows it. nil: Limits.Ceiling.
	Ceiling func(elapsed time.Duration) float64
	// Iterations, if set, runs a fixed amount of work with no gate and no
	// governor; the phase ends when it is done (or at Duration).
	Iterations *Iterations
	// Duration is how long the phase schedules work; 0 runs until the
	// context given to Run ends.
	Duration time.Duration
	// MaxWorkers bounds the open-loop pool (default DefaultMaxWorkers); an
	// arrival that finds every worker busy is dropped and counted.
	// PreAllocated open-loop workers start with the phase.
	MaxWorkers, PreAllocated int
	// KeepWorkers keeps every open-loop worker made until the phase ends,
	// instead of retiring idle ones (pool.go). Script scenarios set it: k6
	// keeps an arrival-rate scenario's VUs once made, and a VU made again
	// would run the script's init code again.
	KeepWorkers bool
	// Grace is how long a stopping phase waits for in-flight iterations
	// (default DefaultGrace; negative: do not wait).
	Grace time.Duration
	// RampDownGrace, for a closed-loop phase on a schedule (Ceiling), is
	// how long an iteration in flight on a worker the falling schedule
	// removes may run on before it is cut off (Interrupter; k6's
	// gracefulRampDown). Negative: cut off at once. 0: never cut off, and
	// the gate keeps one worker at an authored 0 (a URL run's stages).
	RampDownGrace time.Duration
	// Tick is how often the governor reads the counters (default
	// governor.DefaultTick); Settle how long after each change of the
	// offer it discards evidence.
	Tick, Settle time.Duration
	// Logger receives the governor's movement lines (default: discard).
	Logger *slog.Logger
	// Observer, if set, receives every closed window on the governor's
	// loop; it must return quickly.
	Observer func(governor.Window)
	// Governor are extra options for the phase's governor, applied after
	// the phase's own.
	Governor []governor.Option
	// Watch tunes the generator's watch of itself (zero: the defaults).
	Watch WatchConfig
	// Clock is the phase's time source (default clock.Real()): the gate,
	// the governor, the ramp, the watch and the duration follow it.
	Clock clock.Clock
	// Counters are the phase's attempt plane (required).
	Counters Counters
	// NewWorker makes worker id (0, 1, ...) on the goroutine that will
	// run it (a script VU runs its init code there). An error ends the
	// worker and goes to WorkerFailed.
	NewWorker func(id int) (Worker, error)
	// NewLoop, if set, runs the phase's workers as Loops event loops of
	// the host's instead of a goroutine each (loop.go, loopopen.go): loop
	// id (0 .. Loops-1) is made on the goroutine that runs it. NewWorker
	// is then not used. A phase with Iterations or RampDownGrace does not
	// take it.
	NewLoop func(id int) (Loop, error)
	// Loops is how many loops NewLoop makes (default 1; never more than
	// the concurrency ceiling).
	Loops int
	// WorkerFailed, if set, receives NewWorker's (or NewLoop's) errors.
	WorkerFailed func(error)
	// Dropped, if set, is called for every dropped arrival (after the
	// counters count it): a script's dropped_iterations.
	Dropped func()
	// Aborting, if set, is called when the phase aborts its in-flight
	// iterations (a script interrupts its VUs' JavaScript).
	Aborting func()
	// Follow, if set, replaces the phase's governor with an offer decided
	// elsewhere (follow.go): a generator agent whose controller judges
	// every agent's window at once. Windows are not judged here.
	Follow Follower
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	for _, check := range []struct {
		bad bool
		msg string
	}{
		{c.Counters == nil, "no counters"},
		{c.NewWorker == nil && c.NewLoop == nil, "no worker factory"},
		{c.MaxWorkers < 0, fmt.Sprintf("max VUs must be > 0, got %d", c.MaxWorkers)},
		{c.Duration < 0, fmt.Sprintf("duration must be >= 0, got %v", c.Duration)},
		{c.Tick < 0, fmt.Sprintf("tick must be > 0, got %v", c.Tick)},
	} {
		if check.bad {
			return c, errors.New(check.msg)
		}
	}
	if it := c.Iterations; it != nil && (it.Count < 1 || it.Workers < 1) {
		return c, fmt.Errorf("iterations (%d) and VUs (%d) must be >= 1", it.Count, it.Workers)
	}
	if msg := c.checkLoops(); msg != "" {
		return c, errors.New(msg)
	}
	if !c.Governed {
		// The offer stays at the authored value: pinning floor and start to
		// the ceiling lets the same window loop judge and record the phase.
		c.Limits.Floor, c.Limits.Start = c.Limits.Ceiling, c.Limits.Ceiling
	}
	if err := c.Limits.Validate(); err != nil {
		return c, err
	}
	if c.Limits.Mode == governor.Concurrency && c.Limits.Ceiling > math.MaxInt32 {
		return c, fmt.Errorf("concurrency ceiling %v is too large", c.Limits.Ceiling)
	}
	if c.MaxWorkers == 0 {
		c.MaxWorkers = DefaultMaxWorkers
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Tick == 0 {
		c.Tick = governor.DefaultTick
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	return c, nil
}

// maxWorkers is the most workers the phase may run.
func (c Config) maxWorkers() int {
	switch {
	case c.Iterations != nil:
		return c.Iterations.Workers
	case c.Limits.Mode == governor.Concurrency:
		return int(c.Limits.Ceiling)
	}
	return c.MaxWorkers
}
