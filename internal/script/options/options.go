// Package options turns a k6 script's exported options into the scenarios
// throttle runs, each of which becomes one phase.
//
// It follows k6's documented rules: the shortcuts (vus + duration,
// iterations, stages) stand for one scenario named "default"; explicit
// scenarios name their executor; missing values take k6's documented
// defaults. A value throttle cannot honour is an error naming the scenario
// and the option, never a silent default.
package options

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
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

// Options are the parts of a script's options throttle acts on.
type Options struct {
	// Scenarios sorted by start time, then name.
	Scenarios []Scenario
}

// raw mirrors the JSON of k6's options, as far as throttle reads it.
type raw struct {
	VUs        *int                   `json:"vus"`
	Duration   *duration              `json:"duration"`
	Iterations *int                   `json:"iterations"`
	Stages     []rawStage             `json:"stages"`
	Scenarios  map[string]rawScenario `json:"scenarios"`
}

type rawStage struct {
	Duration duration `json:"duration"`
	Target   float64  `json:"target"`
}

type rawScenario struct {
	Executor         string            `json:"executor"`
	StartTime        *duration         `json:"startTime"`
	GracefulStop     *duration         `json:"gracefulStop"`
	Exec             string            `json:"exec"`
	Env              map[string]string `json:"env"`
	Tags             map[string]string `json:"tags"`
	VUs              *int              `json:"vus"`
	Iterations       *int              `json:"iterations"`
	Duration         *duration         `json:"duration"`
	MaxDuration      *duration         `json:"maxDuration"`
	Rate             *float64          `json:"rate"`
	StartRate        *float64          `json:"startRate"`
	TimeUnit         *duration         `json:"timeUnit"`
	PreAllocatedVUs  *int              `json:"preAllocatedVUs"`
	MaxVUs           *int              `json:"maxVUs"`
	StartVUs         *int              `json:"startVUs"`
	GracefulRampDown *duration         `json:"gracefulRampDown"`
	Stages           []rawStage        `json:"stages"`
}

// duration is a k6 duration: a string such as "1m30s" or "500ms", or a
// number of milliseconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		*d = duration(time.Duration(n * float64(time.Millisecond)))
		return nil
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
	if n, err := strconv.ParseFloat(t, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	var days time.Duration
	if i := strings.IndexByte(t, 'd'); i > 0 {
		n, err := strconv.Atoi(t[:i])
		if err != nil {
			return 0, fmt.Errorf("want a duration such as \"30s\", got %q", s)
		}
		days, t = time.Duration(n)*24*time.Hour, t[i+1:]
		if t == "" {
			return days, nil
		}
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as \"30s\", got %q", s)
	}
	return days + v, nil
}

// Parse reads a script's options as JSON (JSON.stringify of the exported
// options; "null" or "" for none) and returns its scenarios.
func Parse(js []byte) (Options, error) {
	var r raw
	if len(js) > 0 && string(js) != "null" && string(js) != "undefined" {
		if err := json.Unmarshal(js, &r); err != nil {
			return Options{}, fmt.Errorf("options: %v", err)
		}
	}
	var out []Scenario
	if len(r.Scenarios) > 0 {
		if r.Duration != nil || r.Iterations != nil || len(r.Stages) > 0 {
			return Options{}, fmt.Errorf("options: scenarios conflict with the duration, iterations and stages shortcuts: give one or the other")
		}
		for name, rs := range r.Scenarios {
			s, err := rs.scenario(name)
			if err != nil {
				return Options{}, err
			}
			out = append(out, s)
		}
	} else {
		s, err := r.shortcut()
		if err != nil {
			return Options{}, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartTime != out[j].StartTime {
			return out[i].StartTime < out[j].StartTime
		}
		return out[i].Name < out[j].Name
	})
	return Options{Scenarios: out}, nil
}

// shortcut is the one scenario k6 makes of the top-level options.
func (r raw) shortcut() (Scenario, error) {
	rs := rawScenario{VUs: r.VUs}
	switch {
	case len(r.Stages) > 0:
		if r.Duration != nil || r.Iterations != nil {
			return Scenario{}, fmt.Errorf("options: stages conflict with duration and iterations")
		}
		rs.Executor, rs.Stages, rs.StartVUs, rs.VUs = string(RampingVUs), r.Stages, r.VUs, nil
	case r.Iterations != nil:
		rs.Executor, rs.Iterations, rs.MaxDuration = string(SharedIterations), r.Iterations, r.Duration
	case r.Duration != nil:
		rs.Executor, rs.Duration = string(ConstantVUs), r.Duration
	default:
		// No options: one iteration on one VU, as k6 does.
		rs.Executor = string(SharedIterations)
	}
	return rs.scenario(DefaultScenario)
}

func (rs rawScenario) scenario(name string) (Scenario, error) {
	s := Scenario{
		Name: name, Executor: Executor(rs.Executor), Exec: rs.Exec, Env: rs.Env, Tags: rs.Tags,
		GracefulStop: DefaultGracefulStop, TimeUnit: DefaultTimeUnit, MaxDuration: DefaultMaxDuration,
		GracefulRampDown: DefaultGracefulRampDown, VUs: 1, Iterations: 1, StartVUs: 1,
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("options: scenario %q: %s", name, fmt.Sprintf(format, args...))
	}
	if s.Exec == "" {
		s.Exec = DefaultExec
	}
	setD := func(dst *time.Duration, src *duration) {
		if src != nil {
			*dst = time.Duration(*src)
		}
	}
	setD(&s.StartTime, rs.StartTime)
	setD(&s.GracefulStop, rs.GracefulStop)
	setD(&s.Duration, rs.Duration)
	setD(&s.MaxDuration, rs.MaxDuration)
	setD(&s.TimeUnit, rs.TimeUnit)
	setD(&s.GracefulRampDown, rs.GracefulRampDown)
	setI := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	setI(&s.VUs, rs.VUs)
	setI(&s.Iterations, rs.Iterations)
	setI(&s.PreAllocatedVUs, rs.PreAllocatedVUs)
	setI(&s.StartVUs, rs.StartVUs)
	if rs.Rate != nil {
		s.Rate = *rs.Rate
	}
	if rs.StartRate != nil {
		s.StartRate = *rs.StartRate
	}
	s.MaxVUs = s.PreAllocatedVUs
	setI(&s.MaxVUs, rs.MaxVUs)
	for _, st := range rs.Stages {
		if st.Duration < 0 || st.Target < 0 || math.IsNaN(st.Target) {
			return s, bad("a stage needs a duration >= 0 and a target >= 0, got %v and %v", time.Duration(st.Duration), st.Target)
		}
		s.Stages = append(s.Stages, Stage{Duration: time.Duration(st.Duration), Target: st.Target})
	}
	switch {
	case s.StartTime < 0:
		return s, bad("startTime must be >= 0")
	case s.GracefulStop < 0:
		return s, bad("gracefulStop must be >= 0")
	case s.TimeUnit <= 0:
		return s, bad("timeUnit must be > 0")
	}
	switch s.Executor {
	case "":
		return s, bad("no executor (want one of %s)", executorNames)
	case ConstantArrivalRate:
		switch {
		case rs.Rate == nil || s.Rate <= 0:
			return s, bad("constant-arrival-rate needs rate > 0")
		case s.Duration <= 0:
			return s, bad("constant-arrival-rate needs a duration > 0")
		}
	case RampingArrivalRate:
		if len(s.Stages) == 0 {
			return s, bad("ramping-arrival-rate needs stages")
		}
		if s.MaxCeiling() <= 0 {
			return s, bad("ramping-arrival-rate needs a stage target or startRate > 0")
		}
	case ConstantVUs:
		if s.Duration <= 0 {
			return s, bad("constant-vus needs a duration > 0")
		}
	case RampingVUs:
		if len(s.Stages) == 0 {
			return s, bad("ramping-vus needs stages")
		}
		if s.StartVUs < 0 {
			return s, bad("startVUs must be >= 0")
		}
		if s.MaxCeiling() < 1 {
			return s, bad("ramping-vus needs a stage target or startVUs >= 1")
		}
		for _, st := range s.Stages {
			if st.Target != math.Trunc(st.Target) {
				return s, bad("ramping-vus stage targets are VUs, whole numbers; got %v", st.Target)
			}
		}
	case PerVUIterations, SharedIterations:
		if s.Iterations < 1 {
			return s, bad("iterations must be >= 1")
		}
		if s.Executor == SharedIterations && s.VUs > s.Iterations {
			// k6 refuses more VUs than shared iterations too.
			return s, bad("vus (%d) must be <= iterations (%d) for shared-iterations", s.VUs, s.Iterations)
		}
		if s.MaxDuration <= 0 {
			return s, bad("maxDuration must be > 0")
		}
	default:
		return s, bad("executor %q is not supported (want one of %s)", s.Executor, executorNames)
	}
	if s.RateMode() {
		if s.PreAllocatedVUs < 1 {
			return s, bad("%s needs preAllocatedVUs >= 1", s.Executor)
		}
		if s.MaxVUs < s.PreAllocatedVUs {
			return s, bad("maxVUs (%d) must be >= preAllocatedVUs (%d)", s.MaxVUs, s.PreAllocatedVUs)
		}
	} else if s.VUs < 1 && s.Executor != RampingVUs {
		return s, bad("vus must be >= 1")
	}
	return s, nil
}

var executorNames = strings.Join([]string{string(ConstantArrivalRate), string(RampingArrivalRate), string(ConstantVUs), string(RampingVUs), string(PerVUIterations), string(SharedIterations)}, ", ")
