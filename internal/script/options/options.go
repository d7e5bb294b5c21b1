// Package options is the k6 options model: it decides what a run is from
// the script's exported options, the K6_* environment variables and the
// command line, by k6's documented precedence (flags over environment over
// script over defaults) and shortcut rules (vus, duration, iterations,
// stages vs scenarios), and turns the scenarios into the phases throttle
// runs.
//
// Every option k6 documents is in Catalog: honoured (parsed into a typed
// field of Options), refused (an *Error naming it; Resolve lists every
// refused option of every source at once, one line each) or, for k6's
// cloud-only options, accepted and ignored as `k6 run` does. Unknown
// scenario keys are errors, as in k6. docs/k6-options.md is Catalog as a
// table.
//
// How to wire it (cmd/throttle):
//
//	var cli options.Flags
//	// for each k6 flag the user gave, by its long or short name:
//	if err := cli.Set("vus", "10"); err != nil { ... } // exit 2
//	env, err := options.FromEnv(os.Environ())           // exit 2 on error
//	opts, err := options.Resolve(scriptOptionsJSON, env, cli)
//	// err is options.Errors: print err.Error() (one line per problem) to
//	// stderr and exit 2. Print each opts.Notices line as a warning.
//
// Register one flag per Catalog entry that has a Flag (its Short as the
// shorthand), refused ones included, so that they are refused with a line
// naming them rather than "unknown flag"; bool flags and --http-debug take
// no value (pass ""). Entries with CLIOnly() (-e, -q, -v) are the
// command's own. Parse(js) is Resolve(js, Flags{}, Flags{}).
package options

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Executor names how a scenario schedules its iterations.
type Executor string

// The executors throttle runs.
const (
	ConstantArrivalRate Executor = "constant-arrival-rate"
	RampingArrivalRate  Executor = "ramping-arrival-rate"
	ConstantVUs         Executor = "constant-vus"
	RampingVUs          Executor = "ramping-vus"
	PerVUIterations     Executor = "per-vu-iterations"
	SharedIterations    Executor = "shared-iterations"
)

// k6's documented defaults.
const (
	DefaultGracefulStop     = 30 * time.Second
	DefaultGracefulRampDown = 30 * time.Second
	DefaultMaxDuration      = 10 * time.Minute
	DefaultTimeUnit         = time.Second
	DefaultExec             = "default"
	DefaultScenario         = "default"
)

// Stage is one leg of a ramp: the value moves linearly to Target over
// Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Scenario is one scenario with every default filled in. Rates are
// iterations per TimeUnit as authored; PerSecond converts.
type Scenario struct {
	Name         string
	Executor     Executor
	StartTime    time.Duration
	GracefulStop time.Duration
	// Exec is the exported function each iteration calls.
	Exec string
	Env  map[string]string
	Tags map[string]string

	// VUs: the VU executors' VU count (constant-vus, *-iterations).
	VUs int
	// Iterations: per VU (per-vu-iterations) or in all (shared-iterations).
	Iterations int
	// Duration of constant-vus and constant-arrival-rate.
	Duration time.Duration
	// MaxDuration bounds the *-iterations executors.
	MaxDuration time.Duration

	// Rate, StartRate: iterations per TimeUnit (arrival-rate executors).
	Rate, StartRate float64
	TimeUnit        time.Duration
	// PreAllocatedVUs are made before the scenario starts; the pool grows
	// to MaxVUs; an arrival with no free VU is dropped.
	PreAllocatedVUs, MaxVUs int

	// StartVUs and GracefulRampDown: ramping-vus.
	StartVUs         int
	GracefulRampDown time.Duration
	// Stages: ramping-vus (targets are VUs) and ramping-arrival-rate
	// (targets are iterations per TimeUnit).
	Stages []Stage

	// IterationBase is the test-wide number of this execution segment's
	// first iteration of a shared-iterations scenario (its part is the
	// contiguous run Segment.Scale counts), so that
	// exec.scenario.iterationInTest is unique across instances, as k6
	// documents; 0 without a segment and for the other executors.
	IterationBase int
}

// Governed reports whether the governor drives the scenario: the
// arrival-rate executors (rate mode) and the VU executors (concurrency
// mode). The iteration executors run as authored.
func (s *Scenario) Governed() bool {
	switch s.Executor {
	case ConstantArrivalRate, RampingArrivalRate, ConstantVUs, RampingVUs:
		return true
	}
	return false
}

// Rate reports whether the scenario is open-loop (an arrival-rate executor).
func (s *Scenario) RateMode() bool {
	return s.Executor == ConstantArrivalRate || s.Executor == RampingArrivalRate
}

// Length is how long the scenario schedules iterations, not counting its
// graceful stop. For the iteration executors it is MaxDuration.
func (s *Scenario) Length() time.Duration {
	switch s.Executor {
	case ConstantArrivalRate, ConstantVUs:
		return s.Duration
	case RampingArrivalRate, RampingVUs:
		var d time.Duration
		for _, st := range s.Stages {
			d += st.Duration
		}
		return d
	}
	return s.MaxDuration
}

// perUnit converts an authored rate to iterations per second.
func (s *Scenario) perUnit(v float64) float64 {
	return v * float64(time.Second) / float64(s.TimeUnit)
}

// Ceiling is the authored value at elapsed time t into the scenario:
// iterations per second for the arrival-rate executors, VUs for the VU
// executors (the stage's target interpolated linearly, as k6 ramps).
func (s *Scenario) Ceiling(t time.Duration) float64 {
	switch s.Executor {
	case ConstantArrivalRate:
		return s.perUnit(s.Rate)
	case RampingArrivalRate:
		return s.perUnit(ramp(s.StartRate, s.Stages, t))
	case ConstantVUs:
		return float64(s.VUs)
	case RampingVUs:
		return math.Round(ramp(float64(s.StartVUs), s.Stages, t))
	}
	return float64(s.VUs)
}

// MaxCeiling is the highest Ceiling over the scenario: the governor's ceiling.
func (s *Scenario) MaxCeiling() float64 {
	switch s.Executor {
	case RampingArrivalRate:
		m := s.StartRate
		for _, st := range s.Stages {
			m = math.Max(m, st.Target)
		}
		return s.perUnit(m)
	case RampingVUs:
		m := float64(s.StartVUs)
		for _, st := range s.Stages {
			m = math.Max(m, st.Target)
		}
		return m
	}
	return s.Ceiling(0)
}

// ramp is the value at t of a ramp starting at start through stages.
func ramp(start float64, stages []Stage, t time.Duration) float64 {
	from := start
	for _, st := range stages {
		if t < st.Duration {
			return from + (st.Target-from)*float64(t)/float64(st.Duration)
		}
		t -= st.Duration
		from = st.Target
	}
	return from
}

// duration is a k6 duration: a string such as "1m30s" or "500ms", or a
// number of milliseconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		v, err := fromFloat(n, time.Millisecond, string(b))
		*d = duration(v)
		return err
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\", got %s", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// ParseDuration parses a k6 duration string: Go's syntax ("1m30s",
// "500ms", "1.5h"), "1d" style days, or a bare number of seconds.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseFloat(t, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		return fromFloat(n, time.Second, s)
	}
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.Atoi(t[:i])
		const maxDays = int(math.MaxInt64 / int64(24*time.Hour))
		if err != nil || n > maxDays || n < -maxDays {
			return 0, fmt.Errorf("want a duration such as \"30s\", got %q", s)
		}
		days, t = time.Duration(n)*24*time.Hour, t[i+1:]
		if t == "" {
			return days, nil
		}
	}
	v, err := time.ParseDuration(t)
	if err != nil || days > 0 && v > math.MaxInt64-days || days < 0 && v < math.MinInt64-days {
		return 0, fmt.Errorf("want a duration such as \"30s\", got %q", s)
	}
	return days + v, nil
}

// fromFloat is n units as a duration; NaN, an infinity and a value past
// what a duration holds (about 292 years) are errors, not wrapped values.
func fromFloat(n float64, unit time.Duration, spelt string) (time.Duration, error) {
	v := n * float64(unit)
	if math.IsNaN(v) || v >= math.MaxInt64 || v <= math.MinInt64 {
		return 0, fmt.Errorf("want a duration such as \"30s\", got %q (out of range)", strings.TrimSpace(spelt))
	}
	return time.Duration(v), nil
}
