package options

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// k6's documented defaults for the options outside scenarios.
const (
	DefaultSetupTimeout         = 60 * time.Second
	DefaultTeardownTimeout      = 60 * time.Second
	DefaultHandleSummaryTimeout = 2 * time.Minute
	DefaultMaxRedirects         = 10
	DefaultBatch                = 20
	DefaultBatchPerHost         = 6
	DefaultSummaryMode          = "compact"
	DefaultCompatibilityMode    = "extended"
	// DefaultUserAgent stands for k6's "Grafana k6/<version>".
	DefaultUserAgent = "throttle (k6 compatible)"
)

// DefaultTrendStats are k6's default summaryTrendStats.
var DefaultTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

// DefaultSystemTags are the system tags k6 adds when systemTags is not
// set (vu, iter and ip only on request).
var DefaultSystemTags = []string{"proto", "subproto", "status", "method", "url", "name", "group", "check", "error", "error_code", "tls_version", "scenario", "service", "expected_response"}

// SystemTagNames are every system tag k6 documents.
var SystemTagNames = append(append([]string{}, DefaultSystemTags...), "rpc_type", "vu", "iter", "ip", "ocsp_status")

// Options are a run's resolved options: the script's, the K6_*
// variables' and the command line's, with k6's defaults filled in. Each
// field is what k6 documents for the option of the same name.
type Options struct {
	// Scenarios sorted by start time, then name: the script's scenarios or
	// the one "default" scenario the shortcuts make.
	Scenarios []Scenario
	// Thresholds sorted by key, in each key the order written. They are
	// parsed even with NoThresholds, which only says not to evaluate them.
	Thresholds []Threshold

	Tags       map[string]string
	SystemTags []string

	SummaryTrendStats []string
	SummaryTimeUnit   string // "" (each value its own unit), s, ms or us
	SummaryMode       string // compact, full, legacy or disabled
	SummaryExport     string
	// NoSummary is also true with SummaryMode disabled.
	NoSummary    bool
	NoThresholds bool
	NoSetup      bool
	NoTeardown   bool

	SetupTimeout         time.Duration
	TeardownTimeout      time.Duration
	HandleSummaryTimeout time.Duration

	NoConnectionReuse     bool
	NoVUConnectionReuse   bool
	UserAgent             string // "" sends no User-Agent header
	MaxRedirects          int
	InsecureSkipTLSVerify bool
	Throw                 bool
	DiscardResponseBodies bool
	Batch                 int
	BatchPerHost          int // 0: no limit per host
	MinIterationDuration  time.Duration
	NoCookiesReset        bool
	HTTPDebug             string // "", headers or full
	IncludeSystemEnvVars  bool
	NoColor               bool
	NoUsageReport         bool
	CompatibilityMode     string
	Out                   []string
	// Hosts maps a host name (or name:port) to the address to dial.
	Hosts map[string]string

	// ExecutionSegment and ExecutionSegmentSequence are the options as
	// given; Segment is the part of the test this instance runs, already
	// applied to Scenarios (whose Idle parts have nothing to run here).
	ExecutionSegment, ExecutionSegmentSequence string
	Segment                                    Segment

	// Notices are what the CLI should print as warnings: things k6 also
	// accepts without acting on (a cloud option, an unknown key, vus beside
	// scenarios, a flag replacing the script's scenarios).
	Notices []string
}

// scriptLayer is the script's options: the options any source can set,
// and those only a script can.
type scriptLayer struct {
	Flags
	scenarios            json.RawMessage // nil: not given
	thresholds           json.RawMessage
	hosts                map[string]string
	handleSummaryTimeout *time.Duration
}

// Parse resolves a script's options alone: Resolve with no environment
// and no flags.
func Parse(js []byte) (Options, error) {
	return Resolve(js, Flags{}, Flags{})
}

// Resolve is the run's options, by k6's order of precedence: the command
// line (cli) over the K6_* variables (env) over the script's exported
// options (script, as JSON.stringify gives them; empty, "null" or
// "undefined" for none) over k6's defaults. Execution follows k6's
// shortcut rules: the highest source that sets any of duration,
// iterations, stages (or scenarios, which only a script sets) decides
// them all, so -d or -i on the command line replaces the script's
// scenarios with the default scenario; in one source, scenarios beside a
// shortcut, or stages beside duration or iterations, conflict; duration
// with iterations is shared-iterations with that maxDuration.
//
// The error, if any, is Errors: every malformed value and every
// unsupported option from all three sources, one line each.
func Resolve(script []byte, env, cli Flags) (Options, error) {
	sl, notices, errs := decodeScript(script)
	errs = append(errs, env.refused...)
	errs = append(errs, cli.refused...)
	errs = append(errs, sl.validate(func(e *Entry) string { return e.Key })...)
	errs = append(errs, env.validate(func(e *Entry) string { return e.Env })...)
	errs = append(errs, cli.validate(func(e *Entry) string { return "--" + e.Flag })...)

	o := Options{
		SummaryTrendStats: DefaultTrendStats, SummaryMode: DefaultSummaryMode, SystemTags: DefaultSystemTags,
		SetupTimeout: DefaultSetupTimeout, TeardownTimeout: DefaultTeardownTimeout, HandleSummaryTimeout: DefaultHandleSummaryTimeout,
		UserAgent: DefaultUserAgent, MaxRedirects: DefaultMaxRedirects, Batch: DefaultBatch, BatchPerHost: DefaultBatchPerHost,
		IncludeSystemEnvVars: true, CompatibilityMode: DefaultCompatibilityMode, Hosts: sl.hosts, Notices: notices,
	}
	layers := []*Flags{&cli, &env, &sl.Flags} // highest first
	dst := reflect.ValueOf(&o).Elem()
	for i := range Catalog {
		e := &Catalog[i]
		if e.field == "" || isExecution(e.field) {
			continue
		}
		for _, l := range layers {
			if v := l.field(e); !v.IsNil() {
				if v.Kind() == reflect.Pointer {
					v = v.Elem()
				}
				dst.FieldByName(e.field).Set(v)
				break
			}
		}
	}
	if sl.handleSummaryTimeout != nil {
		o.HandleSummaryTimeout = *sl.handleSummaryTimeout
	}
	o.NoSummary = o.NoSummary || o.SummaryMode == "disabled"

	scenarios, notes, es := execution(sl, env, cli)
	o.Scenarios, o.Notices = scenarios, append(o.Notices, notes...)
	errs = append(errs, es...)
	if seg, err := resolveSegment(o.ExecutionSegment, o.ExecutionSegmentSequence); err != nil {
		errs = append(errs, err)
	} else {
		o.Segment = seg
		for i := range o.Scenarios {
			o.Scenarios[i] = o.Scenarios[i].Segmented(seg)
		}
	}
	if sl.thresholds != nil {
		var es Errors
		o.Thresholds, es = parseThresholds(sl.thresholds)
		errs = append(errs, es...)
	}
	if len(errs) > 0 {
		return Options{}, errs
	}
	return o, nil
}

func isExecution(field string) bool {
	switch field {
	case "VUs", "Duration", "Iterations", "Stages":
		return true
	}
	return false
}

// sets reports which execution options f sets.
func (f *Flags) sets() (names []string) {
	if f.Duration != nil {
		names = append(names, "duration")
	}
	if f.Iterations != nil {
		names = append(names, "iterations")
	}
	if f.Stages != nil {
		names = append(names, "stages")
	}
	return names
}

// execution applies k6's shortcut rules to the three sources.
func execution(sl scriptLayer, env, cli Flags) ([]Scenario, []string, Errors) {
	var vus *int
	for _, l := range []*Flags{&cli, &env, &sl.Flags} {
		if l.VUs != nil {
			vus = l.VUs
			break
		}
	}
	var notes []string
	top, where := &sl.Flags, "script options"
	switch {
	case len(cli.sets()) > 0:
		top, where = &cli, "command line"
	case len(env.sets()) > 0:
		top, where = &env, "K6_* environment"
	}
	if top == &sl.Flags && sl.scenarios != nil {
		var errs Errors
		for _, name := range sl.sets() {
			errs = append(errs, &Error{Option: name, Msg: "using an execution shortcut and scenarios in the same place is not allowed (k6 refuses it too): give one or the other"})
		}
		if len(errs) > 0 {
			return nil, nil, errs
		}
		if vus != nil {
			notes = append(notes, "options: vus is not used: with scenarios, each scenario sets its own VUs (as in k6)")
		}
		list, errs := decodeScenarios(sl.scenarios)
		return sortScenarios(list), notes, errs
	}
	if sl.scenarios != nil {
		notes = append(notes, fmt.Sprintf("options: %s from the %s: the script's scenarios are replaced by the default scenario (as in k6)", strings.Join(top.sets(), " and "), where))
	}
	s, err := shortcut(vus, top)
	if err != nil {
		return nil, notes, Errors{err}
	}
	return []Scenario{s}, notes, nil
}

// shortcut is the "default" scenario k6 makes of vus and one source's
// duration, iterations or stages.
func shortcut(vus *int, f *Flags) (Scenario, *Error) {
	rs := rawScenario{VUs: vus}
	toD := func(d *time.Duration) *duration {
		if d == nil {
			return nil
		}
		v := duration(*d)
		return &v
	}
	switch {
	case f.Stages != nil:
		if f.Duration != nil || f.Iterations != nil {
			return Scenario{}, &Error{Option: "stages", Msg: "stages conflict with " + strings.Join(f.sets()[:len(f.sets())-1], " and ") + " in the same place (k6 refuses it too)"}
		}
		rs.Executor, rs.Stages, rs.StartVUs, rs.VUs = string(RampingVUs), f.Stages, vus, nil
		if len(f.Stages) == 0 {
			return Scenario{}, &Error{Option: "stages", Msg: "empty: give at least one stage"}
		}
	case f.Iterations != nil:
		rs.Executor, rs.Iterations, rs.MaxDuration = string(SharedIterations), f.Iterations, toD(f.Duration)
	case f.Duration != nil:
		rs.Executor, rs.Duration = string(ConstantVUs), toD(f.Duration)
	default:
		// Nothing but perhaps vus: one iteration on each VU.
		rs.Executor = string(PerVUIterations)
	}
	s, err := rs.scenario(DefaultScenario)
	if err != nil {
		return s, &Error{Option: err.Option, Msg: err.Msg + " (the default scenario the shortcut options make)"}
	}
	return s, nil
}

func sortScenarios(out []Scenario) []Scenario {
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartTime != out[j].StartTime {
			return out[i].StartTime < out[j].StartTime
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// decodeScript reads the script's options object key by key, so that
// every problem is reported and names its key.
func decodeScript(js []byte) (scriptLayer, []string, Errors) {
	var sl scriptLayer
	switch strings.TrimSpace(string(js)) {
	case "", "null", "undefined":
		return sl, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil || m == nil {
		return sl, nil, Errors{{Msg: "the exported options must be an object, got " + clip(js)}}
	}
	keys := slices.Sorted(maps.Keys(m))
	var notices []string
	var errs Errors
	for _, k := range keys {
		v := m[k]
		e, ok := byKey[k]
		switch {
		case !ok:
			notices = append(notices, fmt.Sprintf("options: %s is not a k6 option; ignored, as k6 ignores it", k))
		case e.Status == Refused && e.asksNothing(string(v), true):
			// e.g. linger: false, rps: 0: asks for what throttle does
		case e.Status == Refused:
			errs = append(errs, refusal(k, e))
		case k == "ext":
			es, ns := decodeExt(v)
			errs, notices = append(errs, es...), append(notices, ns...)
		case e.Status == Ignored:
			notices = append(notices, fmt.Sprintf("options: %s is a k6 cloud option; ignored, as k6 run ignores it", k))
		case string(v) == "null":
			// undefined in the script: not given
		case k == "scenarios":
			sl.scenarios = v
		case k == "thresholds":
			sl.thresholds = v
		case k == "hosts":
			h, err := decodeStringMap(v)
			if err != nil {
				errs = append(errs, &Error{Option: k, Msg: err.Error()})
			}
			sl.hosts = h
		case k == "handleSummaryTimeout":
			var d duration
			if err := json.Unmarshal(v, &d); err != nil || d <= 0 {
				errs = append(errs, &Error{Option: k, Msg: fmt.Sprintf("want a duration > 0 such as \"2m\", got %s", clip(v))})
			}
			hs := time.Duration(d)
			sl.handleSummaryTimeout = &hs
		default:
			if err := sl.setJSON(e, v); err != nil {
				errs = append(errs, err.(*Error))
			}
		}
	}
	return sl, notices, errs
}

// decodeExt accepts ext.loadimpact (k6 cloud's settings, ignored as k6 run
// ignores them) and refuses every other extension's options.
func decodeExt(v json.RawMessage) (Errors, []string) {
	_, keys, bad := object(v, "ext", "an object")
	if bad != nil {
		return Errors{bad}, nil
	}
	var errs Errors
	var notes []string
	for _, k := range keys {
		if k == "loadimpact" {
			notes = append(notes, "options: ext.loadimpact is a k6 cloud option; ignored, as k6 run ignores it")
			continue
		}
		errs = append(errs, &Error{Option: "ext." + k, Unsupported: true, Msg: "not supported by throttle: options of a k6 extension"})
	}
	return errs, notes
}

var trendStatSyntax = regexp.MustCompile(`^(avg|min|med|max|count|p\((\d+(?:\.\d+)?)\))$`)

// validate checks the values f gives, naming each option as its source
// spells it.
func (f *Flags) validate(spell func(*Entry) string) Errors {
	var errs Errors
	bad := func(field, format string, args ...any) {
		for i := range Catalog {
			if Catalog[i].field == field {
				errs = append(errs, &Error{Option: spell(&Catalog[i]), Msg: fmt.Sprintf(format, args...)})
				return
			}
		}
	}
	oneOf := func(field string, v *string, allowed ...string) {
		if v != nil && !slices.Contains(allowed, *v) {
			bad(field, "%q: want %s", *v, strings.Join(allowed, ", "))
		}
	}
	oneOf("SummaryTimeUnit", f.SummaryTimeUnit, "s", "ms", "us")
	oneOf("SummaryMode", f.SummaryMode, "compact", "full", "legacy", "disabled")
	oneOf("HTTPDebug", f.HTTPDebug, "", "headers", "full")
	if c := f.CompatibilityMode; c != nil && *c != DefaultCompatibilityMode {
		for i := range Catalog {
			if Catalog[i].field == "CompatibilityMode" {
				errs = append(errs, &Error{Option: spell(&Catalog[i]), Unsupported: true, Msg: fmt.Sprintf("%q is not supported by throttle: only %q", *c, DefaultCompatibilityMode)})
			}
		}
	}
	for _, s := range f.SummaryTrendStats {
		g := trendStatSyntax.FindStringSubmatch(strings.TrimSpace(s))
		if g == nil {
			bad("SummaryTrendStats", "%q: want avg, min, med, max, count or p(N)", s)
		} else if p, _ := strconv.ParseFloat(g[2], 64); p > 100 {
			bad("SummaryTrendStats", "%q: a percentile is at most 100", s)
		}
	}
	for _, t := range f.SystemTags {
		if !slices.Contains(SystemTagNames, t) {
			bad("SystemTags", "%q is not a k6 system tag (want %s)", t, strings.Join(SystemTagNames, ", "))
		}
	}
	for k := range f.Tags {
		if strings.TrimSpace(k) == "" {
			bad("Tags", "a tag needs a name")
		}
	}
	for _, n := range []struct {
		field string
		v     *int
		min   int
	}{{"VUs", f.VUs, 0}, {"Iterations", f.Iterations, 0}, {"MaxRedirects", f.MaxRedirects, 0}, {"Batch", f.Batch, 1}, {"BatchPerHost", f.BatchPerHost, 0}} {
		if n.v != nil && *n.v < n.min {
			bad(n.field, "must be >= %d, got %d", n.min, *n.v)
		}
	}
	for _, d := range []struct {
		field string
		v     *time.Duration
		min   time.Duration
	}{{"Duration", f.Duration, 0}, {"MinIterationDuration", f.MinIterationDuration, 0}, {"SetupTimeout", f.SetupTimeout, 1}, {"TeardownTimeout", f.TeardownTimeout, 1}} {
		if d.v != nil && *d.v < d.min {
			bad(d.field, "must be %s, got %v", map[bool]string{true: "> 0", false: ">= 0"}[d.min > 0], *d.v)
		}
	}
	return errs
}
