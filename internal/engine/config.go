package engine

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/targets"
)

// Defaults Config's zero fields take.
const (
	// DefaultMaxVUs bounds the rate-mode worker pool.
	DefaultMaxVUs = phase.DefaultMaxWorkers
	// DefaultTimeout bounds one attempt, from sending to the last body byte.
	DefaultTimeout = 10 * time.Second
	// DefaultGrace is how long a stopping phase waits for in-flight
	// iterations before it aborts them.
	DefaultGrace = phase.DefaultGrace
	// BackoffBase and BackoffCap shape the pause between tries: try n waits
	// a random time in [d/2, d] with d = min(BackoffCap, BackoffBase × 2^(n−1)).
	// Small, because the governor, not the retry loop, is what relieves a
	// struggling target; jittered, so retries do not arrive in lockstep.
	BackoffBase = 10 * time.Millisecond
	BackoffCap  = 320 * time.Millisecond
)

// Config describes one governed HTTP load phase. Fields left zero take the
// defaults documented on them; Limits has no defaults here (build it with
// governor.NewLimits).
type Config struct {
	// Targets are sent round-robin; at least one.
	Targets []targets.Target
	// Limits bound the governor: the mode (open-loop Rate or closed-loop
	// Concurrency), ceiling, floor, start, high, low, window, min attempts.
	Limits governor.Limits
	// Fixed turns the governor off: the offer stays at the ceiling for the
	// whole phase (a baseline to compare against). Windows are still judged
	// and recorded, so the report has a timeline.
	Fixed bool
	// Duration is how long the phase runs; 0 runs until the context given
	// to Run ends.
	Duration time.Duration
	// MaxVUs bounds the rate-mode worker pool (default DefaultMaxVUs). An
	// arrival that finds every worker busy is dropped and counted.
	// Concurrency mode runs at most ceiling workers and ignores it.
	MaxVUs int
	// Timeout bounds one attempt (default DefaultTimeout).
	Timeout time.Duration
	// Tries is how many attempts an iteration makes at most (default 1).
	Tries int
	// FailOn says which attempts fail (default DefaultFailOn).
	FailOn *FailOn
	// Insecure skips TLS certificate verification.
	Insecure bool
	// Resolver looks up host names (nil: the system's); see DriverConfig.
	Resolver *net.Resolver
	// HTTP2 sends through net/http, which speaks HTTP/2 where the server
	// offers it over TLS; the default is HTTP/1.1 on fasthttp.
	HTTP2 bool
	// Transport picks the HTTP/1.1 transport: "" takes TransportEnv's
	// value, else the event loop where it applies (transportFor);
	// TransportFastHTTP keeps every attempt on fasthttp; TransportEvLoop
	// is the default's choice, said explicitly.
	Transport string
	// Slow, when > 0, is a latency budget: an otherwise ok attempt slower
	// than Slow fails with class ClassSlow. 0 (the default) has none.
	Slow time.Duration
	// Watch tunes the generator's watch of itself (zero: the defaults).
	Watch WatchConfig
	// Grace is how long a stopping phase waits for in-flight iterations
	// (default DefaultGrace; negative: do not wait).
	Grace time.Duration
	// Tick is how often the governor reads the counters (default
	// governor.DefaultTick).
	Tick time.Duration
	// Settle is how long after each change of the offer the governor
	// discards evidence (governor.WithSettle); 0 discards none. The CLI
	// passes one tick unless told otherwise.
	Settle time.Duration
	// Logger receives the governor's movement lines (default: discard).
	Logger *slog.Logger
	// Observer, if set, receives every closed window on the governor's loop;
	// it must return quickly.
	Observer func(governor.Window)
	// Latency, if set, receives every resolved attempt's latency.
	Latency LatencyRecorder
	// Governor are extra options for the phase's governor (early breach,
	// the kinds of evidence it reads), applied after the engine's own.
	Governor []governor.Option
	// Follow, if set, takes the offer from elsewhere instead of a governor
	// of the phase's own (phase.Config.Follow): a generator agent.
	Follow phase.Follower
}

// withDefaults fills the zero fields of the sending side and checks them;
// the phase runtime checks and fills the rest (limits, duration, pool,
// grace, tick, logger), and New copies them back.
func (c Config) withDefaults() (Config, error) {
	switch {
	case len(c.Targets) == 0:
		return c, errors.New("no targets")
	case c.Timeout < 0:
		return c, fmt.Errorf("timeout must be > 0, got %v", c.Timeout)
	case c.Tries < 0:
		return c, fmt.Errorf("tries must be >= 1, got %d", c.Tries)
	case c.Slow < 0:
		return c, fmt.Errorf("slow must be >= 0, got %v", c.Slow)
	}
	c.Timeout, c.Tries = cmp.Or(c.Timeout, DefaultTimeout), cmp.Or(c.Tries, 1)
	var err error
	if c.Transport, err = transportName(c.Transport); err != nil {
		return c, err
	}
	if c.FailOn == nil {
		f, _ := ParseFailOn(DefaultFailOn)
		c.FailOn = &f
	}
	return c, nil
}

// adopt takes the defaults the phase runtime filled in.
func (c *Config) adopt(p phase.Config) {
	c.Limits, c.MaxVUs, c.Grace, c.Tick, c.Logger = p.Limits, p.MaxWorkers, p.Grace, p.Tick, p.Logger
}

// workers is the most workers the phase may run.
func (c Config) workers() int {
	if c.Limits.Mode == governor.Concurrency {
		return int(c.Limits.Ceiling)
	}
	return c.MaxVUs
}
