package options

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// ExternallyControlled is k6's executor driven by its REST API, which
// throttle does not have: refused.
const ExternallyControlled Executor = "externally-controlled"

// commonKeys are the keys every scenario may have (k6's common options).
var commonKeys = []string{"executor", "startTime", "gracefulStop", "exec", "env", "tags", "options"}

// executorKeys are the keys each executor adds; any other key is an
// error, as in k6.
var executorKeys = map[Executor][]string{
	SharedIterations:    {"vus", "iterations", "maxDuration"},
	PerVUIterations:     {"vus", "iterations", "maxDuration"},
	ConstantVUs:         {"vus", "duration"},
	RampingVUs:          {"startVUs", "stages", "gracefulRampDown"},
	ConstantArrivalRate: {"rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"},
	RampingArrivalRate:  {"startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"},
}

var executorNames = strings.Join([]string{string(ConstantArrivalRate), string(RampingArrivalRate), string(ConstantVUs), string(RampingVUs), string(PerVUIterations), string(SharedIterations)}, ", ")

// rawScenario is a scenario as written; nil is "not given".
type rawScenario struct {
	Executor         string
	StartTime        *duration
	GracefulStop     *duration
	Exec             string
	Env              map[string]string
	Tags             map[string]string
	VUs              *int
	Iterations       *int
	Duration         *duration
	MaxDuration      *duration
	Rate             *float64
	StartRate        *float64
	TimeUnit         *duration
	PreAllocatedVUs  *int
	MaxVUs           *int
	StartVUs         *int
	GracefulRampDown *duration
	Stages           []Stage
}

// decodeScenarios reads options.scenarios, reporting every bad scenario.
func decodeScenarios(raw json.RawMessage) ([]Scenario, Errors) {
	m, names, bad := object(raw, "scenarios", "an object of name: {executor, ...}")
	if bad != nil {
		return nil, Errors{bad}
	}
	var out []Scenario
	var errs Errors
	for _, name := range names {
		rs, es := decodeScenario(name, m[name])
		if len(es) > 0 {
			errs = append(errs, es...)
			continue
		}
		s, err := rs.scenario(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

// decodeScenario reads one scenario strictly: every key must belong to
// its executor, every value must have the right type.
func decodeScenario(name string, raw json.RawMessage) (rawScenario, Errors) {
	var rs rawScenario
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return rs, Errors{{Scenario: name, Msg: "want an object {executor, ...}, got " + clip(raw)}}
	}
	bad := func(key, format string, args ...any) *Error {
		return &Error{Scenario: name, Option: key, Msg: fmt.Sprintf(format, args...)}
	}
	ex, ok := m["executor"]
	if !ok {
		return rs, Errors{bad("executor", "missing (want one of %s)", executorNames)}
	}
	if json.Unmarshal(ex, &rs.Executor) != nil {
		return rs, Errors{bad("executor", "want a string, got %s", clip(ex))}
	}
	extra, known := executorKeys[Executor(rs.Executor)]
	switch {
	case Executor(rs.Executor) == ExternallyControlled:
		return rs, Errors{{Scenario: name, Unsupported: true, Msg: `executor "externally-controlled" is not supported by throttle: it has no REST API to drive it`}}
	case !known:
		return rs, Errors{bad("executor", "%q is not a k6 executor (want one of %s)", rs.Executor, executorNames)}
	}
	allowed := map[string]bool{}
	for _, k := range append(append([]string{}, commonKeys...), extra...) {
		allowed[k] = true
	}
	keys := slices.Sorted(maps.Keys(m))
	var errs Errors
	for _, k := range keys {
		v := m[k]
		if !allowed[k] {
			errs = append(errs, bad(k, "unknown key for a %s scenario (want %s)", rs.Executor, strings.Join(append(append([]string{}, commonKeys...), extra...), ", ")))
			continue
		}
		if string(v) == "null" {
			continue
		}
		var err error
		switch k {
		case "executor":
		case "exec":
			if json.Unmarshal(v, &rs.Exec) != nil {
				err = fmt.Errorf("want a function name, got %s", clip(v))
			}
		case "env":
			rs.Env, err = decodeStringMap(v)
		case "tags":
			rs.Tags, err = decodeStringMap(v)
		case "stages":
			rs.Stages, err = decodeStages(v)
		case "options":
			if e := scenarioOptions(name, v); e != nil {
				errs = append(errs, e)
			}
		case "startTime", "gracefulStop", "duration", "maxDuration", "timeUnit", "gracefulRampDown":
			d := new(duration)
			err = json.Unmarshal(v, d)
			*map[string]**duration{"startTime": &rs.StartTime, "gracefulStop": &rs.GracefulStop, "duration": &rs.Duration,
				"maxDuration": &rs.MaxDuration, "timeUnit": &rs.TimeUnit, "gracefulRampDown": &rs.GracefulRampDown}[k] = d
		case "rate", "startRate":
			f := new(float64)
			if json.Unmarshal(v, f) != nil {
				err = fmt.Errorf("want a number, got %s", clip(v))
			}
			*map[string]**float64{"rate": &rs.Rate, "startRate": &rs.StartRate}[k] = f
		default: // the whole-number keys
			n := new(int)
			if json.Unmarshal(v, n) != nil {
				err = fmt.Errorf("want a whole number, got %s", clip(v))
			}
			*map[string]**int{"vus": &rs.VUs, "iterations": &rs.Iterations, "preAllocatedVUs": &rs.PreAllocatedVUs,
				"maxVUs": &rs.MaxVUs, "startVUs": &rs.StartVUs}[k] = n
		}
		if err != nil {
			errs = append(errs, bad(k, "%v", err))
		}
	}
	return rs, errs
}

// scenarioOptions checks a scenario's options object: k6 uses it only for
// k6/browser, which needs a real browser.
func scenarioOptions(name string, v json.RawMessage) *Error {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		return &Error{Scenario: name, Option: "options", Msg: "want an object, got " + clip(v)}
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if k == "browser" {
			return &Error{Scenario: name, Option: "options.browser", Unsupported: true, Msg: "not supported by throttle: browser scenarios need a real browser (k6/browser)"}
		}
		return &Error{Scenario: name, Option: "options." + k, Msg: "unknown key (k6 knows only options.browser)"}
	}
	return nil
}

// scenario fills k6's defaults into rs and checks the values.
func (rs rawScenario) scenario(name string) (Scenario, *Error) {
	s := Scenario{
		Name: name, Executor: Executor(rs.Executor), Exec: rs.Exec, Env: rs.Env, Tags: rs.Tags,
		GracefulStop: DefaultGracefulStop, TimeUnit: DefaultTimeUnit, MaxDuration: DefaultMaxDuration,
		GracefulRampDown: DefaultGracefulRampDown, VUs: 1, Iterations: 1, StartVUs: 1, Stages: rs.Stages,
	}
	bad := func(option, format string, args ...any) *Error {
		return &Error{Scenario: name, Option: option, Msg: fmt.Sprintf(format, args...)}
	}
	if s.Exec == "" {
		s.Exec = DefaultExec
	}
	for _, d := range []struct {
		dst *time.Duration
		src *duration
	}{{&s.StartTime, rs.StartTime}, {&s.GracefulStop, rs.GracefulStop}, {&s.Duration, rs.Duration}, {&s.MaxDuration, rs.MaxDuration},
		{&s.TimeUnit, rs.TimeUnit}, {&s.GracefulRampDown, rs.GracefulRampDown}} {
		if d.src != nil {
			*d.dst = time.Duration(*d.src)
		}
	}
	for _, n := range []struct {
		dst *int
		src *int
	}{{&s.VUs, rs.VUs}, {&s.Iterations, rs.Iterations}, {&s.PreAllocatedVUs, rs.PreAllocatedVUs}, {&s.StartVUs, rs.StartVUs}} {
		if n.src != nil {
			*n.dst = *n.src
		}
	}
	if rs.Rate != nil {
		s.Rate = *rs.Rate
	}
	if rs.StartRate != nil {
		s.StartRate = *rs.StartRate
	}
	s.MaxVUs = s.PreAllocatedVUs
	if rs.MaxVUs != nil {
		s.MaxVUs = *rs.MaxVUs
	}
	for _, st := range s.Stages {
		if st.Duration < 0 || st.Target < 0 || math.IsNaN(st.Target) || math.IsInf(st.Target, 0) {
			return s, bad("stages", "a stage needs a duration >= 0 and a target >= 0, got %v and %v", st.Duration, st.Target)
		}
	}
	switch {
	case s.StartTime < 0:
		return s, bad("startTime", "must be >= 0")
	case s.GracefulStop < 0:
		return s, bad("gracefulStop", "must be >= 0")
	case s.GracefulRampDown < 0:
		return s, bad("gracefulRampDown", "must be >= 0")
	case s.TimeUnit <= 0:
		return s, bad("timeUnit", "must be > 0")
	}
	switch s.Executor {
	case ConstantArrivalRate:
		switch {
		case rs.Rate == nil || s.Rate <= 0 || math.IsInf(s.Rate, 0):
			return s, bad("rate", "constant-arrival-rate needs rate > 0")
		case s.Duration <= 0:
			return s, bad("duration", "constant-arrival-rate needs a duration > 0")
		}
	case RampingArrivalRate:
		if s.StartRate < 0 || math.IsInf(s.StartRate, 0) {
			return s, bad("startRate", "must be >= 0")
		}
		if len(s.Stages) == 0 {
			return s, bad("stages", "ramping-arrival-rate needs stages")
		}
		if s.MaxCeiling() <= 0 {
			return s, bad("stages", "ramping-arrival-rate needs a stage target or startRate > 0")
		}
	case ConstantVUs:
		if s.Duration <= 0 {
			return s, bad("duration", "constant-vus needs a duration > 0")
		}
	case RampingVUs:
		if len(s.Stages) == 0 {
			return s, bad("stages", "ramping-vus needs stages")
		}
		if s.StartVUs < 0 {
			return s, bad("startVUs", "must be >= 0")
		}
		if s.MaxCeiling() < 1 {
			return s, bad("stages", "ramping-vus needs a stage target or startVUs >= 1")
		}
		for _, st := range s.Stages {
			if st.Target != math.Trunc(st.Target) {
				return s, bad("stages", "ramping-vus stage targets are VUs, whole numbers; got %v", st.Target)
			}
		}
	case PerVUIterations, SharedIterations:
		if s.Iterations < 1 {
			return s, bad("iterations", "must be >= 1")
		}
		if s.Executor == SharedIterations && s.VUs > s.Iterations {
			// k6 refuses more VUs than shared iterations too.
			return s, bad("vus", "%d must be <= iterations (%d) for shared-iterations", s.VUs, s.Iterations)
		}
		if s.MaxDuration <= 0 {
			return s, bad("maxDuration", "must be > 0")
		}
	}
	if s.RateMode() {
		if s.PreAllocatedVUs < 1 {
			return s, bad("preAllocatedVUs", "%s needs preAllocatedVUs >= 1", s.Executor)
		}
		if s.MaxVUs < s.PreAllocatedVUs {
			return s, bad("maxVUs", "%d must be >= preAllocatedVUs (%d)", s.MaxVUs, s.PreAllocatedVUs)
		}
	} else if s.VUs < 1 && s.Executor != RampingVUs {
		return s, bad("vus", "must be >= 1")
	}
	return s, nil
}

// object decodes a JSON object and its keys in order, or says what option
// wanted one.
func object(raw json.RawMessage, option, want string) (map[string]json.RawMessage, []string, *Error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, nil, &Error{Option: option, Msg: "want " + want + ", got " + clip(raw)}
	}
	return m, slices.Sorted(maps.Keys(m)), nil
}
