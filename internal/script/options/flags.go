package options

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Flags are the options one source gives: the command line or the K6_*
// environment variables (the script's options are decoded into the same
// shape). A nil pointer, slice or map is "not given", so that a lower
// source's value or the default shows through.
type Flags struct {
	// The execution shortcuts: -u, -d, -i, -s.
	VUs        *int
	Duration   *time.Duration
	Iterations *int
	Stages     []Stage

	Tags       map[string]string // --tag NAME=VALUE
	SystemTags []string

	SummaryTrendStats []string
	SummaryTimeUnit   *string
	SummaryMode       *string
	SummaryExport     *string
	NoSummary         *bool
	NoThresholds      *bool
	NoSetup           *bool
	NoTeardown        *bool

	SetupTimeout    *time.Duration
	TeardownTimeout *time.Duration

	NoConnectionReuse     *bool
	NoVUConnectionReuse   *bool
	UserAgent             *string
	MaxRedirects          *int
	InsecureSkipTLSVerify *bool
	Throw                 *bool
	DiscardResponseBodies *bool
	Batch                 *int
	BatchPerHost          *int
	MinIterationDuration  *time.Duration
	NoCookiesReset        *bool
	HTTPDebug             *string
	IncludeSystemEnvVars  *bool
	NoColor               *bool
	NoUsageReport         *bool
	CompatibilityMode     *string
	Out                   []string

	ExecutionSegment         *string
	ExecutionSegmentSequence *string

	// refused are the documented k6 options this source gave that
	// throttle does not support; Resolve reports them with the rest.
	refused Errors
}

// Set records one command-line flag, by its long or short name without
// dashes ("vus", "u", "stage"), with its value as typed. A list flag
// (--stage, --tag, --out, --system-tags, --summary-trend-stats) appends,
// so a repeated flag adds to it; a boolean flag takes "" as true; a
// --http-debug without a value takes "" as "headers". A documented k6 flag
// throttle does not support is not an error here: Resolve reports it, with
// every other refused option, in one go. A flag k6 does not have is an
// error.
func (f *Flags) Set(flag, value string) error {
	e, ok := byFlag[flag]
	if !ok {
		return &Error{Option: "--" + flag, Msg: "not a k6 option"}
	}
	spelt := "--" + e.Flag
	switch {
	case e.Status == Refused:
		if !e.asksNothing(value, false) {
			f.refused = append(f.refused, refusal(spelt, e))
		}
		return nil
	case e.Status == Ignored:
		return nil
	case e.field == "":
		return &Error{Option: spelt, Msg: "handled by the command line itself, not an option to resolve"}
	}
	if value == "" {
		switch e.field {
		case "HTTPDebug":
			value = "headers"
		default:
			if _, isBool := f.field(e).Interface().(*bool); isBool {
				value = "true"
			}
		}
	}
	return f.setString(e, spelt, value, e.Flag != "out")
}

// FromEnv reads the K6_* variables of environ (os.Environ's form,
// NAME=VALUE) that name a k6 option. A documented one throttle does not
// support is kept for Resolve to report; a malformed value is an error;
// other variables (K6_CLOUD_TOKEN, K6_BROWSER_*, the script's own) are not
// options and are left alone, as k6 leaves them.
func FromEnv(environ []string) (Flags, error) {
	var f Flags
	var errs Errors
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		e, known := byEnv[name]
		if !ok || !known {
			continue
		}
		switch e.Status {
		case Refused:
			if !e.asksNothing(value, false) {
				f.refused = append(f.refused, refusal(name, e))
			}
			continue
		case Ignored:
			continue
		}
		if err := f.setString(e, name, value, true); err != nil {
			errs = append(errs, err.(*Error))
		}
	}
	return f, errs.err()
}

func refusal(spelt string, e *Entry) *Error {
	return &Error{Option: spelt, Unsupported: true, Msg: "not supported by throttle: " + e.Note}
}

// field is the Flags field e sets.
func (f *Flags) field(e *Entry) reflect.Value {
	return reflect.ValueOf(f).Elem().FieldByName(e.field)
}

// setString parses a flag's or variable's text into e's field. split
// says whether a list value is comma-separated.
func (f *Flags) setString(e *Entry, spelt, value string, split bool) error {
	bad := func(format string, args ...any) error {
		return &Error{Option: spelt, Msg: fmt.Sprintf(format, args...)}
	}
	list := func() []string {
		if !split {
			return []string{value}
		}
		var out []string
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	switch p := f.field(e).Addr().Interface().(type) {
	case **int:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return bad("want a whole number, got %q", value)
		}
		*p = &n
	case **bool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return bad("want true or false, got %q", value)
		}
		*p = &b
	case **string:
		*p = &value
	case **time.Duration:
		d, err := ParseDuration(value)
		if err != nil {
			return bad("%v", err)
		}
		*p = &d
	case *[]string:
		*p = append(*p, list()...)
	case *[]Stage:
		for _, s := range list() {
			st, err := parseStage(s)
			if err != nil {
				return bad("%v", err)
			}
			*p = append(*p, st)
		}
	case *map[string]string:
		for _, s := range list() {
			k, v, ok := strings.Cut(s, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return bad("want NAME=VALUE, got %q", s)
			}
			if *p == nil {
				*p = map[string]string{}
			}
			(*p)[strings.TrimSpace(k)] = v
		}
	default:
		panic("options: catalog field " + e.field + " has no parser")
	}
	return nil
}

// parseStage parses the -s form of a stage, duration:target ("30s:10").
func parseStage(s string) (Stage, error) {
	d, t, ok := strings.Cut(s, ":")
	if !ok {
		return Stage{}, fmt.Errorf("want a stage as duration:target such as 30s:10, got %q", s)
	}
	dur, err := ParseDuration(d)
	if err != nil {
		return Stage{}, err
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil {
		return Stage{}, fmt.Errorf("want a stage as duration:target such as 30s:10, got %q", s)
	}
	return Stage{Duration: dur, Target: n}, nil
}

// setJSON decodes a script option's JSON value into e's field, strictly:
// a value of the wrong type is an error naming the key.
func (f *Flags) setJSON(e *Entry, raw json.RawMessage) error {
	bad := func(want string) error {
		return &Error{Option: e.Key, Msg: fmt.Sprintf("want %s, got %s", want, clip(raw))}
	}
	if string(raw) == "null" {
		return nil // undefined in the script: not given
	}
	switch p := f.field(e).Addr().Interface().(type) {
	case **int:
		var n int
		if json.Unmarshal(raw, &n) != nil {
			return bad("a whole number")
		}
		*p = &n
	case **bool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return bad("true or false")
		}
		*p = &b
	case **string:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return bad("a string")
		}
		*p = &s
	case **time.Duration:
		var d duration
		if err := json.Unmarshal(raw, &d); err != nil {
			return &Error{Option: e.Key, Msg: err.Error()}
		}
		v := time.Duration(d)
		*p = &v
	case *[]string:
		var l []string
		if json.Unmarshal(raw, &l) != nil {
			return bad("an array of strings")
		}
		*p = append([]string{}, l...)
	case *[]Stage:
		st, err := decodeStages(raw)
		if err != nil {
			return &Error{Option: e.Key, Msg: err.Error()}
		}
		*p = st
	case *map[string]string:
		m, err := decodeStringMap(raw)
		if err != nil {
			return &Error{Option: e.Key, Msg: err.Error()}
		}
		*p = m
	default:
		panic("options: catalog field " + e.field + " has no decoder")
	}
	return nil
}

// decodeStages reads an array of {duration, target}, every key known.
func decodeStages(raw json.RawMessage) ([]Stage, error) {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, fmt.Errorf("want an array of {duration, target}, got %s", clip(raw))
	}
	out := make([]Stage, 0, len(list))
	for i, m := range list {
		var st Stage
		for k, v := range m {
			switch k {
			case "duration":
				var d duration
				if err := json.Unmarshal(v, &d); err != nil {
					return nil, fmt.Errorf("stage %d: duration: %v", i, err)
				}
				st.Duration = time.Duration(d)
			case "target":
				if json.Unmarshal(v, &st.Target) != nil {
					return nil, fmt.Errorf("stage %d: target: want a number, got %s", i, clip(v))
				}
			default:
				return nil, fmt.Errorf("stage %d: unknown key %q (want duration and target)", i, k)
			}
		}
		if _, ok := m["duration"]; !ok {
			return nil, fmt.Errorf("stage %d: no duration", i)
		}
		out = append(out, st)
	}
	return out, nil
}

// decodeStringMap reads an object of strings (tags, env, hosts). Numbers
// and booleans are taken as their text, as k6's tags accept them.
func decodeStringMap(raw json.RawMessage) (map[string]string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, fmt.Errorf("want an object of strings, got %s", clip(raw))
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
			continue
		}
		var n json.Number
		var b bool
		switch {
		case json.Unmarshal(v, &n) == nil:
			out[k] = n.String()
		case json.Unmarshal(v, &b) == nil:
			out[k] = strconv.FormatBool(b)
		default:
			return nil, fmt.Errorf("%q: want a string, got %s", k, clip(v))
		}
	}
	return out, nil
}

// clip shortens a JSON value for an error line.
func clip(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:37]) + "..."
	}
	return string(raw)
}
