package options

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Threshold is one expression of options.thresholds on one metric or
// sub-metric, parsed: `p(95) < 500` is Stat "p", Percentile 95, Op "<",
// Value 500.
type Threshold struct {
	// Metric is the metric's name without a selector; Key the key as
	// written ("http_req_duration{status:200}").
	Metric, Key string
	// Filter is the sub-metric's tag selector, nil for the whole metric.
	Filter map[string]string
	// Source is the expression as written.
	Source string
	// Stat is the aggregation: avg, min, max, med, count, rate, value or
	// p (Percentile holds N of p(N)).
	Stat       string
	Percentile float64
	// Op is one of < <= > >= == === !=.
	Op    string
	Value float64
	// AbortOnFail ends the run when the threshold is crossed, once
	// DelayAbortEval has passed since the start.
	AbortOnFail    bool
	DelayAbortEval time.Duration
}

var thresholdSyntax = regexp.MustCompile(`^\s*(avg|min|max|med|count|rate|value|p\(\s*(\d+(?:\.\d+)?)\s*\))\s*(<=|>=|===|==|!=|<|>)\s*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$`)

// parseThresholds reads options.thresholds: metric key → array of
// expressions, each a string or {threshold, abortOnFail, delayAbortEval}.
// Every malformed one is reported.
func parseThresholds(raw json.RawMessage) ([]Threshold, Errors) {
	m, keys, bad := object(raw, "thresholds", "an object of metric: [expressions]")
	if bad != nil {
		return nil, Errors{bad}
	}
	var out []Threshold
	var errs Errors
	for _, key := range keys {
		bad := func(format string, args ...any) {
			errs = append(errs, &Error{Option: fmt.Sprintf("thresholds[%q]", key), Msg: fmt.Sprintf(format, args...)})
		}
		metric, filter, err := ParseSelector(key)
		if err != nil {
			bad("%v", err)
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(m[key], &items) != nil {
			// k6 also takes a single expression string.
			var s string
			if json.Unmarshal(m[key], &s) != nil {
				bad("want an array of expressions, got %s", clip(m[key]))
				continue
			}
			items = []json.RawMessage{m[key]}
		}
		for _, item := range items {
			th, err := parseThreshold(item)
			if err != nil {
				bad("%v", err)
				continue
			}
			th.Metric, th.Key, th.Filter = metric, key, filter
			out = append(out, th)
		}
	}
	return out, errs
}

func parseThreshold(item json.RawMessage) (Threshold, error) {
	var th Threshold
	var expr string
	if json.Unmarshal(item, &expr) != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil || obj == nil {
			return th, fmt.Errorf("want a string or {threshold, abortOnFail, delayAbortEval}, got %s", clip(item))
		}
		for k, v := range obj {
			var err error
			switch k {
			case "threshold":
				err = json.Unmarshal(v, &expr)
			case "abortOnFail":
				err = json.Unmarshal(v, &th.AbortOnFail)
			case "delayAbortEval":
				var d duration
				if err = json.Unmarshal(v, &d); err == nil && d < 0 {
					err = fmt.Errorf("must be >= 0")
				}
				th.DelayAbortEval = time.Duration(d)
			default:
				err = fmt.Errorf("unknown key (want threshold, abortOnFail, delayAbortEval)")
			}
			if err != nil {
				return th, fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	g := thresholdSyntax.FindStringSubmatch(expr)
	if g == nil {
		return th, fmt.Errorf("%q is not an expression such as \"p(95)<500\", \"avg<200\", \"rate<0.01\", \"count>10\"", expr)
	}
	th.Source, th.Stat, th.Op = strings.TrimSpace(expr), g[1], g[3]
	if g[2] != "" {
		th.Stat = "p"
		th.Percentile, _ = strconv.ParseFloat(g[2], 64)
		if th.Percentile > 100 {
			return th, fmt.Errorf("%q: a percentile is at most 100", expr)
		}
	}
	th.Value, _ = strconv.ParseFloat(g[4], 64)
	return th, nil
}

// ParseSelector splits a threshold key into its metric and its sub-metric
// tag selector: "http_req_duration{status:200,method:GET}" is
// http_req_duration with {status: 200, method: GET}. A value may be
// quoted and may itself hold colons (group:::login is group "::login").
func ParseSelector(key string) (metric string, filter map[string]string, err error) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		if strings.TrimSpace(key) == "" || strings.ContainsAny(key, "}") {
			return "", nil, fmt.Errorf("not a metric name")
		}
		return key, nil, nil
	}
	metric = strings.TrimSpace(key[:open])
	if metric == "" || strings.ContainsAny(metric, "}") || !strings.HasSuffix(key, "}") {
		return "", nil, fmt.Errorf("want metric{tag:value,...}")
	}
	filter = map[string]string{}
	for _, kv := range strings.Split(key[open+1:len(key)-1], ",") {
		k, v, ok := strings.Cut(kv, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if !ok || k == "" {
			return "", nil, fmt.Errorf("want metric{tag:value,...}, got %q", kv)
		}
		filter[k] = v
	}
	return metric, filter, nil
}
