package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportPrintsTablesAndWritesChart runs a small report (two capacities
// of the sweep, a short run) and checks that every table is there with a
// row per controller and model, and that the chart is an SVG.
func TestReportPrintsTablesAndWritesChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.svg")
	var out bytes.Buffer
	err := run([]string{"-c", "300", "-windows", "400", "-sweep-from", "100", "-sweep-to", "101", "-sweep-run", "5m", "-chart", path}, &out)
	if err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, want := range []string{
		"## Per model, c = 300",
		"| shed | throttle |", "| shed | throttle, seed |", "| shed | aimd |", "| shed | ramp |", "| shed | fixed |",
		"| dead, recovers | throttle |", "| halves | fixed |",
		"| backlog | throttle |", "| backlog, timeout | fixed |",
		"## Sweep over c", "| collapse | ramp | ",
		"## Slow start's overshoot", "| shed | throttle | ", "| collapse | throttle, seed | ",
		"failed % before settling",
		"written to " + path,
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("throttle")) {
		t.Fatalf("chart is not an SVG naming the controllers: %.200s", svg)
	}
}

func TestBadFlagsAreOneClearError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "abc"}, "-c: capacity"},
		{[]string{"-c", "20000"}, "-c: capacity"},
		{[]string{"-windows", "3"}, "-windows"},
		{[]string{"-sweep-from", "500", "-sweep-to", "100"}, "-sweep-from"},
		{[]string{"-stretch", "1"}, "-stretch"},
		{[]string{"-chart-model", "nope", "-chart", "x.svg", "-sweep-to", "20"}, "-chart-model"},
	} {
		var out bytes.Buffer
		err := run(tc.args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}
