package options

import (
	"strings"
	"testing"
	"time"
)

// TestEveryScenarioKey sets every documented key of every executor.
func TestEveryScenarioKey(t *testing.T) {
	o, err := Parse([]byte(`{"scenarios": {
	  "si": {"executor": "shared-iterations", "vus": 2, "iterations": 6, "maxDuration": "20s",
	         "startTime": "1s", "gracefulStop": "2s", "exec": "f", "env": {"A": "1"}, "tags": {"t": "v"}},
	  "pv": {"executor": "per-vu-iterations", "vus": 3, "iterations": 4, "maxDuration": "30s"},
	  "cv": {"executor": "constant-vus", "vus": 5, "duration": "15s"},
	  "rv": {"executor": "ramping-vus", "startVUs": 0, "gracefulRampDown": "3s",
	         "stages": [{"duration": "5s", "target": 4}, {"duration": "5s", "target": 0}]},
	  "ca": {"executor": "constant-arrival-rate", "rate": 20, "timeUnit": "2s", "duration": "10s", "preAllocatedVUs": 2, "maxVUs": 8},
	  "ra": {"executor": "ramping-arrival-rate", "startRate": 1, "timeUnit": "1m", "preAllocatedVUs": 1, "maxVUs": 3,
	         "stages": [{"duration": "10s", "target": 60}]}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Scenario{}
	for _, s := range o.Scenarios {
		by[s.Name] = s
	}
	if s := by["si"]; s.VUs != 2 || s.Iterations != 6 || s.MaxDuration != 20*time.Second || s.StartTime != time.Second || s.GracefulStop != 2*time.Second ||
		s.Exec != "f" || s.Env["A"] != "1" || s.Tags["t"] != "v" {
		t.Errorf("si: %+v", s)
	}
	if s := by["pv"]; s.Executor != PerVUIterations || s.VUs != 3 || s.Iterations != 4 || s.MaxDuration != 30*time.Second || s.GracefulStop != 30*time.Second || s.Exec != "default" {
		t.Errorf("pv: %+v", s)
	}
	if s := by["cv"]; s.VUs != 5 || s.Duration != 15*time.Second {
		t.Errorf("cv: %+v", s)
	}
	if s := by["rv"]; s.StartVUs != 0 || s.GracefulRampDown != 3*time.Second || len(s.Stages) != 2 || s.MaxCeiling() != 4 {
		t.Errorf("rv: %+v", s)
	}
	if s := by["ca"]; s.Rate != 20 || s.TimeUnit != 2*time.Second || s.Ceiling(0) != 10 || s.PreAllocatedVUs != 2 || s.MaxVUs != 8 {
		t.Errorf("ca: %+v", s)
	}
	if s := by["ra"]; s.StartRate != 1 || s.Ceiling(10*time.Second) != 1 || s.MaxVUs != 3 || s.GracefulRampDown != DefaultGracefulRampDown {
		t.Errorf("ra: %+v", s)
	}
	// Sorted by start time, then name.
	if o.Scenarios[len(o.Scenarios)-1].Name != "si" {
		t.Errorf("order: %v", o.Scenarios)
	}
}

func TestScenarioKeysStrict(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"x": {"executor": "constant-vus", "duration": "1s", "rate": 5}}`, `options: scenario "x": rate: unknown key for a constant-vus scenario`},
		{`{"x": {"executor": "constant-vus", "duration": "1s", "gracefullStop": "1s"}}`, `gracefullStop: unknown key`},
		{`{"x": {"executor": "shared-iterations", "gracefulRampDown": "1s"}}`, `gracefulRampDown: unknown key for a shared-iterations scenario`},
		{`{"x": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1}], "gracefulRampDown": "-1s"}}`, `gracefulRampDown: must be >= 0`},
		{`{"x": {"executor": "constant-vus", "duration": "1s", "vus": "2"}}`, `vus: want a whole number`},
		{`{"x": {"executor": "constant-vus", "duration": "1s", "env": {"A": [1]}}}`, `env: "A": want a string`},
		{`{"x": {"executor": "constant-vus", "duration": "1s", "options": {"speed": 1}}}`, `options.speed: unknown key`},
		{`{"x": {"executor": "constant-vus", "duration": "1s", "exec": 3}}`, `exec: want a function name`},
		{`{"x": {"executor": "looping"}}`, `executor: "looping" is not a k6 executor`},
		{`{"x": 3}`, `scenario "x": want an object`},
	} {
		_, err := Parse([]byte(`{"scenarios": ` + c.js + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.js, err, c.want)
		}
	}
	// Every bad key of every scenario, at once.
	_, err := Parse([]byte(`{"scenarios": {"a": {"executor": "constant-vus", "duration": "1s", "p": 1, "q": 2}, "b": {"executor": "per-vu-iterations", "r": 3}}}`))
	if err == nil || len(strings.Split(err.Error(), "\n")) != 3 {
		t.Errorf("want 3 lines, got %v", err)
	}
}

func TestThresholds(t *testing.T) {
	o, err := Parse([]byte(`{"thresholds": {
	  "http_req_duration": ["p(95)<500", "p(99.9) <= 1e3", "avg<200"],
	  "http_req_failed": [{"threshold": "rate<0.01", "abortOnFail": true, "delayAbortEval": "10s"}],
	  "http_req_duration{name:login, method:\"POST\"}": ["max<2000"],
	  "http_reqs{group:::shop::cart}": "count>=10",
	  "checks{scenario:default}": ["rate===1", "value != 0"]
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Threshold{}
	for _, th := range o.Thresholds {
		got[th.Key+" "+th.Source] = th
	}
	for key, want := range map[string]Threshold{
		"http_req_duration p(95)<500":             {Metric: "http_req_duration", Stat: "p", Percentile: 95, Op: "<", Value: 500},
		"http_req_duration p(99.9) <= 1e3":        {Metric: "http_req_duration", Stat: "p", Percentile: 99.9, Op: "<=", Value: 1000},
		"http_req_failed rate<0.01":               {Metric: "http_req_failed", Stat: "rate", Op: "<", Value: 0.01, AbortOnFail: true, DelayAbortEval: 10 * time.Second},
		"http_reqs{group:::shop::cart} count>=10": {Metric: "http_reqs", Stat: "count", Op: ">=", Value: 10},
		"checks{scenario:default} value != 0":     {Metric: "checks", Stat: "value", Op: "!=", Value: 0},
	} {
		th, ok := got[key]
		if !ok || th.Metric != want.Metric || th.Stat != want.Stat || th.Percentile != want.Percentile || th.Op != want.Op || th.Value != want.Value ||
			th.AbortOnFail != want.AbortOnFail || th.DelayAbortEval != want.DelayAbortEval {
			t.Errorf("%s: %+v, want %+v", key, th, want)
		}
	}
	login := got[`http_req_duration{name:login, method:"POST"} max<2000`]
	if login.Filter["name"] != "login" || login.Filter["method"] != "POST" || len(login.Filter) != 2 {
		t.Errorf("sub-metric selector: %v", login.Filter)
	}
	if f := got["http_reqs{group:::shop::cart} count>=10"].Filter; f["group"] != "::shop::cart" {
		t.Errorf("group selector: %v", f)
	}
	if len(o.Thresholds) != 8 {
		t.Errorf("%d thresholds, want 8", len(o.Thresholds))
	}
	for _, c := range []struct{ js, want string }{
		{`{"m": ["p95<1"]}`, `thresholds["m"]: "p95<1" is not an expression`},
		{`{"m": ["p(101)<1"]}`, `a percentile is at most 100`},
		{`{"m{name}": ["avg<1"]}`, `thresholds["m{name}"]: want metric{tag:value,...}`},
		{`{"m{a:b": ["avg<1"]}`, `want metric{tag:value,...}`},
		{`{"m": [{"threshold": "avg<1", "abortOnFail": "yes"}]}`, `abortOnFail:`},
		{`{"m": [{"threshold": "avg<1", "delayAbortEval": "-1s"}]}`, `delayAbortEval: must be >= 0`},
		{`{"m": [{"threshold": "avg<1", "abort": true}]}`, `abort: unknown key`},
		{`{"m": 5}`, `want an array of expressions`},
		{`[]`, `thresholds: want an object`},
	} {
		_, err := Parse([]byte(`{"thresholds": ` + c.js + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.js, err, c.want)
		}
	}
}
