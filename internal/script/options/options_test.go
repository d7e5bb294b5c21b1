package options

import (
	"strings"
	"testing"
	"time"
)

func TestShortcuts(t *testing.T) {
	for _, c := range []struct {
		js   string
		want Executor
		vus  int
	}{
		{``, PerVUIterations, 1},
		{`null`, PerVUIterations, 1},
		{`{"vus": 3}`, PerVUIterations, 3},
		{`{"vus": 5, "duration": "10s"}`, ConstantVUs, 5},
		{`{"iterations": 7, "vus": 2}`, SharedIterations, 2},
		{`{"stages": [{"duration": "5s", "target": 10}]}`, RampingVUs, 1},
	} {
		o, err := Parse([]byte(c.js))
		if err != nil {
			t.Fatalf("%s: %v", c.js, err)
		}
		s := o.Scenarios[0]
		if len(o.Scenarios) != 1 || s.Name != "default" || s.Executor != c.want || s.VUs != c.vus || s.Exec != "default" {
			t.Errorf("%s: %+v", c.js, o.Scenarios)
		}
	}
	o, _ := Parse(nil)
	if s := o.Scenarios[0]; s.Iterations != 1 {
		t.Errorf("no options: %d iterations, want 1", s.Iterations)
	}
}

func TestScenarios(t *testing.T) {
	o, err := Parse([]byte(`{"scenarios": {
	  "b": {"executor": "constant-arrival-rate", "rate": 30, "timeUnit": "1m", "duration": "1m30s", "preAllocatedVUs": 2, "startTime": "10s"},
	  "a": {"executor": "ramping-arrival-rate", "startRate": 10, "preAllocatedVUs": 1, "maxVUs": 9,
	        "stages": [{"duration": "10s", "target": 110}, {"duration": "10s", "target": 0}]},
	  "c": {"executor": "ramping-vus", "startVUs": 0, "stages": [{"duration": "4s", "target": 8}], "exec": "other", "gracefulStop": 0}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, s := range o.Scenarios {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "a,c,b" {
		t.Fatalf("order %v: want by start time, then name", names)
	}
	a, c, b := o.Scenarios[0], o.Scenarios[1], o.Scenarios[2]
	if b.Ceiling(0) != 0.5 || b.MaxVUs != 2 || b.Length() != 90*time.Second || b.StartTime != 10*time.Second || !b.RateMode() {
		t.Errorf("b: %+v ceiling %v", b, b.Ceiling(0))
	}
	if a.Ceiling(0) != 10 || a.Ceiling(5*time.Second) != 60 || a.Ceiling(15*time.Second) != 55 || a.Ceiling(time.Minute) != 0 || a.MaxCeiling() != 110 {
		t.Errorf("a ramp: %v %v %v %v max %v", a.Ceiling(0), a.Ceiling(5*time.Second), a.Ceiling(15*time.Second), a.Ceiling(time.Minute), a.MaxCeiling())
	}
	if c.Ceiling(2*time.Second) != 4 || c.MaxCeiling() != 8 || c.Exec != "other" || c.GracefulStop != 0 || !c.Governed() || c.RateMode() {
		t.Errorf("c: %+v", c)
	}
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"scenarios": {"x": {}}}`, `scenario "x": executor: missing`},
		{`{"scenarios": {"x": {"executor": "externally-controlled"}}}`, `executor "externally-controlled" is not supported`},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "duration": "1s", "preAllocatedVUs": 1}}}`, "rate > 0"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 5, "duration": "1s"}}}`, "preAllocatedVUs >= 1"},
		{`{"scenarios": {"x": {"executor": "constant-arrival-rate", "rate": 5, "duration": "1s", "preAllocatedVUs": 5, "maxVUs": 2}}}`, "maxVUs: 2 must be >= preAllocatedVUs (5)"},
		{`{"scenarios": {"x": {"executor": "constant-vus", "vus": 2}}}`, "duration > 0"},
		{`{"scenarios": {"x": {"executor": "ramping-vus", "stages": [{"duration": "1s", "target": 1.5}]}}}`, "whole numbers"},
		{`{"scenarios": {"x": {"executor": "shared-iterations", "vus": 5, "iterations": 2}}}`, "vus: 5 must be <= iterations (2)"},
		{`{"scenarios": {"x": {"executor": "constant-vus", "duration": "soon"}}}`, `"soon"`},
		{`{"vus": 2, "duration": "1s", "scenarios": {"x": {"executor": "constant-vus", "duration": "1s"}}}`, "duration: using an execution shortcut and scenarios in the same place"},
	} {
		_, err := Parse([]byte(c.js))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.js, err, c.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"30s": 30 * time.Second, "1m30s": 90 * time.Second, "500ms": 500 * time.Millisecond, "1d2h": 26 * time.Hour, "2": 2 * time.Second} {
		if d, err := ParseDuration(s); err != nil || d != want {
			t.Errorf("%q: %v %v, want %v", s, d, err, want)
		}
	}
	if _, err := ParseDuration("x"); err == nil {
		t.Error("x parsed")
	}
}
