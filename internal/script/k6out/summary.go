// Package k6out writes what a k6 user reads after a script run: the
// end-of-test summary in k6's layout, the summary export, k6's JSON-lines
// metric output (--out json=FILE) and what handleSummary returned.
package k6out

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// WriteSummary prints a script run's end-of-test summary in the layout
// of its summaryMode (s.Mode): k6's compact (the default) or full
// (compact.go), or legacy. It returns how many thresholds were crossed.
func WriteSummary(w io.Writer, s *script.Summary) int {
	switch s.Mode {
	case "compact":
		return writeCompact(w, s, false)
	case "full":
		return writeCompact(w, s, true)
	}
	return writeLegacy(w, s)
}

// writeLegacy prints the summary in k6's legacy layout (before v1.0,
// --summary-mode=legacy): the tree of checks (✓ all passed, ✗ with the pass
// share and counts beneath), then every metric alphabetically, its name
// padded with dots, marked ✓ or ✗ when it has thresholds, a sub-metric
// ({tag:value}) under its metric, and last each crossed threshold. It
// returns how many thresholds were crossed.
func writeLegacy(w io.Writer, s *script.Summary) int {
	fmt.Fprintln(w)
	writeGroup(w, s.Root, 5)
	type line struct {
		indent      int
		label, val  string
		mark        string
		base, order string
	}
	var lines []line
	width, crossed := 0, 0
	var failed []string
	for _, m := range s.Metrics {
		l := line{label: m.Name, base: m.Name, val: k6Value(m, s.TimeUnit), mark: " "}
		if i := strings.IndexByte(m.Name, '{'); i > 0 {
			l.base, l.indent = m.Name[:i], 2
			l.label = "{ " + strings.ReplaceAll(strings.TrimSuffix(m.Name[i+1:], "}"), ",", ", ") + " }"
		}
		for _, th := range m.Thresholds {
			if l.mark == " " {
				l.mark = "✓"
			}
			if !th.OK {
				l.mark = "✗"
				crossed++
				failed = append(failed, fmt.Sprintf("     ✗ %s '%s' (%s)", m.Name, th.Source, k6Number(th.Value)))
			}
		}
		width = max(width, l.indent+len(l.label))
		lines = append(lines, l)
	}
	sort.SliceStable(lines, func(i, j int) bool {
		if lines[i].base != lines[j].base {
			return lines[i].base < lines[j].base
		}
		return lines[i].indent < lines[j].indent
	})
	for _, l := range lines {
		dots := strings.Repeat(".", width+3-l.indent-len(l.label))
		fmt.Fprintf(w, "   %s %s%s%s: %s\n", l.mark, strings.Repeat(" ", l.indent), l.label, dots, l.val)
	}
	if len(failed) > 0 {
		fmt.Fprintln(w)
		for _, f := range failed {
			fmt.Fprintln(w, f)
		}
	}
	return crossed
}

// writeGroup prints a group's checks, then its groups (█ name), indented.
func writeGroup(w io.Writer, g *script.Group, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, c := range g.Checks {
		if c.Fails == 0 {
			fmt.Fprintf(w, "%s✓ %s\n", pad, c.Name)
			continue
		}
		share := 100 * float64(c.Passes) / float64(c.Passes+c.Fails)
		fmt.Fprintf(w, "%s✗ %s\n%s ↳  %s%% — ✓ %d / ✗ %d\n", pad, c.Name, pad, k6Number(math.Round(share)), c.Passes, c.Fails)
	}
	if len(g.Checks) > 0 {
		fmt.Fprintln(w)
	}
	for _, sub := range g.Groups {
		fmt.Fprintf(w, "%s█ %s\n\n", pad, sub.Name)
		writeGroup(w, sub, indent+2)
	}
}

// k6Value is a metric's figures as k6 prints them: a Counter's count and
// rate per second, a Rate's percentage with passes and fails, a Gauge's
// value with min and max, a Trend's summaryTrendStats as stat=value.
func k6Value(m script.SummaryMetric, unit string) string {
	v := func(x float64) string { return metricValue(m, x, unit) }
	st := map[string]float64{}
	for _, s := range m.Stats {
		st[s.Name] = s.Value
	}
	switch m.Type {
	case script.Counter:
		return fmt.Sprintf("%s %s/s", v(st["count"]), v(st["rate"]))
	case script.Gauge:
		return fmt.Sprintf("%s min=%s max=%s", v(st["value"]), v(st["min"]), v(st["max"]))
	case script.Rate:
		return fmt.Sprintf("%.2f%% ✓ %d ✗ %d", 100*st["rate"], uint64(st["passes"]), uint64(st["fails"]))
	}
	parts := make([]string, 0, len(m.Stats))
	for _, s := range m.Stats {
		if s.Name == "count" {
			parts = append(parts, "count="+k6Number(s.Value)) // a count, never a time
			continue
		}
		parts = append(parts, s.Name+"="+v(s.Value))
	}
	return strings.Join(parts, " ")
}

// k6Number is a plain number: at most six decimals, trailing zeros cut.
func k6Number(x float64) string {
	s := strconv.FormatFloat(x, 'f', 6, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// twoDecimals is x with at most two decimals, trailing zeros cut.
func twoDecimals(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// k6Time is a time in milliseconds in summaryTimeUnit (s, ms, us), or
// without one in the unit that suits it: µs below a millisecond, ms below
// a second, s below a minute, then minutes and seconds.
func k6Time(ms float64, unit string) string {
	switch unit {
	case "s":
		return twoDecimals(ms/1000) + "s"
	case "ms":
		return twoDecimals(ms) + "ms"
	case "us":
		return twoDecimals(ms*1000) + "µs"
	}
	switch a := math.Abs(ms); {
	case a == 0:
		return "0s"
	case a < 0.001:
		return twoDecimals(ms*1e6) + "ns"
	case a < 1:
		return twoDecimals(ms*1000) + "µs"
	case a < 1000:
		return twoDecimals(ms) + "ms"
	case a < 60000:
		return twoDecimals(ms/1000) + "s"
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(10 * time.Millisecond).String()
}

// k6Bytes is a byte count in SI units: 600 B, 81 kB, 1.3 MB.
func k6Bytes(b float64) string {
	if b < 1000 {
		return k6Number(math.Round(b)) + " B"
	}
	units := []string{"kB", "MB", "GB", "TB", "PB"}
	e := min(int(math.Floor(math.Log10(b)/3)), len(units))
	v := b / math.Pow(1000, float64(e))
	f := "%.0f %s"
	if v < 10 {
		f = "%.1f %s"
	}
	return fmt.Sprintf(f, v, units[e-1])
}
