//go:build compat

// The harness's own tests, kept out of `go test ./...` and `make test` by
// the build tag like the suite itself; `make compat` runs them first.
package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseSpecReadsDirectivesAndSkipsProse(t *testing.T) {
	path := writeScript(t, `// k6 docs: "quoted prose" and a summary: are not directives
// args: -u 2 -e "GREETING=hello world"
// env: K6_VUS=2
// summary: handleSummary out.json
// expect: exit 99
// expect: metric iterations count 18..22
// expect: check "status is 200" 20 0
// expect: stdout contains "a \"quoted\" word"
export default function () {}
`)
	s, err := parseSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.args, "|"); got != "-u|2|-e|GREETING=hello world" {
		t.Errorf("args = %q", got)
	}
	if len(s.env) != 1 || s.env[0] != "K6_VUS=2" {
		t.Errorf("env = %q", s.env)
	}
	if s.source != "out.json" {
		t.Errorf("source = %q", s.source)
	}
	if len(s.checks) != 4 {
		t.Fatalf("got %d expectations, want 4", len(s.checks))
	}
	if e := s.checks[1]; e.kind != "metric" || e.want != (bound{18, 22}) || e.words[0] != "iterations" {
		t.Errorf("metric expectation = %+v", e)
	}
	if e := s.checks[3]; e.words[1] != `a "quoted" word` {
		t.Errorf("quoted operand = %q", e.words[1])
	}
}

func TestParseSpecRefusesBadLines(t *testing.T) {
	for _, text := range []string{
		"// expect: metric iterations count 20\n",                 // no exit line
		"// expect: exit 0\n// expect: metric iterations 20\n",    // too few operands
		"// expect: exit 0\n// expect: metric a b 5..1\n",         // empty range
		"// expect: exit 0\n// expect: frobnicate x\n",            // unknown directive
		"// expect: exit 0\n// expect: threshold m \"x\" maybe\n", // neither ok nor crossed
		"// expect: exit 0\n// expect: stdout has \"x\"\n",        // unknown text operator
		"// expect: exit 0\n// env: NOEQUALS\n",
		"// expect: exit 0\n// expect: check \"open 1 0\n",
	} {
		if _, err := parseSpec(writeScript(t, text)); err == nil {
			t.Errorf("parseSpec accepted %q", text)
		}
	}
}

func TestJudge(t *testing.T) {
	srv := &target{}
	srv.reset()
	srv.hits["/ok"] = 3
	srv.distinct["/ok"] = map[string]bool{"a": true, "b": true}
	r := result{
		code:   99,
		stdout: "checks...: 100.00%\n",
		srv:    srv,
		sum: summary{
			metrics:    map[string]map[string]float64{"iterations": {"count": 20}},
			thresholds: map[string]map[string]bool{"http_req_failed": {"rate<0.01": true}},
			checks:     []checkCount{{name: "ok", passes: 2, fails: 1}, {name: "ok", passes: 3}},
			groups:     []string{"login"},
		},
	}
	cases := []struct {
		line string
		pass bool
	}{
		{"exit 99", true},
		{"exit 0", false},
		{"metric iterations count 18..22", true},
		{"metric iterations count 21", false},
		{"metric iterations rate 1", false},
		{"metric vus max 1", false},
		{"nometric dropped_iterations", true},
		{"nometric iterations", false},
		{`check "ok" 5 1`, true}, // summed over groups
		{`check "ok" 5 0`, false},
		{`check "missing" 0 0`, false},
		{`group "login"`, true},
		{`group "cart"`, false},
		{`threshold http_req_failed "rate<0.01" crossed`, true},
		{`threshold http_req_failed "rate<0.01" ok`, false},
		{`threshold http_req_failed "rate<0.5" ok`, false},
		{`stdout contains "100.00%"`, true},
		{`stdout lacks "100.00%"`, false},
		{"stdout lines 1", true},
		{"stderr lines 0", true},
		{"server /ok 3", true},
		{"server /ok 0", false},
		{"distinct /ok 2", true},
	}
	for _, c := range cases {
		words, err := splitWords(c.line)
		if err != nil {
			t.Fatal(err)
		}
		e, err := parseExpectation(words)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		reason := r.judge(e)
		if (reason == "") != c.pass {
			t.Errorf("%s: pass=%v, reason %q", c.line, reason == "", reason)
		}
		if reason != "" && strings.Contains(reason, "\n") {
			t.Errorf("%s: reason spans lines: %q", c.line, reason)
		}
	}
}

func TestReadHandleSummaryTurnsOKIntoCrossed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	data := `{"metrics":{"http_reqs":{"type":"counter","values":{"count":4,"rate":2},
	  "thresholds":{"count==4":{"ok":true},"count<1":{"ok":false}}}},
	  "root_group":{"name":"","groups":[{"name":"g","groups":[],"checks":[{"name":"c","passes":4,"fails":0}]}],"checks":[]}}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readHandleSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.metrics["http_reqs"]["count"] != 4 {
		t.Errorf("count = %v", s.metrics["http_reqs"]["count"])
	}
	if s.thresholds["http_reqs"]["count==4"] || !s.thresholds["http_reqs"]["count<1"] {
		t.Errorf("thresholds = %v", s.thresholds)
	}
	if len(s.checks) != 1 || s.checks[0].passes != 4 || len(s.groups) != 1 || s.groups[0] != "g" {
		t.Errorf("checks %v groups %v", s.checks, s.groups)
	}
}
