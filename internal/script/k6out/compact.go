package k6out

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/throttlekit/throttle/internal/script"
)

// The compact and full layouts of k6 v1's end-of-test summary, written from
// the example in k6's documentation (results-output/end-of-test):
//
//	  █ THRESHOLDS
//
//	    http_req_duration
//	    ✓ 'p(95)<1500' p(95)=148.21ms
//
//
//	  █ TOTAL RESULTS
//
//	    checks_total.......................: 90      13.122179/s
//	    checks_succeeded...................: 100.00% 90 out of 90
//	    checks_failed......................: 0.00%   0 out of 90
//
//	    ✓ status is 200
//
//	    HTTP
//	    http_req_duration..................: avg=140.36ms   min=119.08ms ...
//	      { expected_response:true }.......: avg=140.36ms   min=119.08ms ...
//	    http_req_failed....................: 0.00%  0 out of 45
//
// Metrics are grouped by category (CUSTOM first), names padded with dots
// to 35 columns, and values aligned in columns: the checks apart, the
// trends together, the other metrics together. Full adds the HTTP timing
// metrics and group_duration that compact leaves out, each group's checks
// (█ GROUP) and each scenario's metrics (█ SCENARIO).

// labelWidth is the dotted label's width in the documented example.
const labelWidth = 35

// compactHidden are the metrics compact leaves out and full shows.
var compactHidden = map[string]bool{
	"http_req_blocked": true, "http_req_connecting": true, "http_req_tls_handshaking": true,
	"http_req_sending": true, "http_req_waiting": true, "http_req_receiving": true, "group_duration": true,
}

// categories in the order they are printed; a metric belongs to the
// first whose test it passes (CUSTOM: every other).
var categories = []struct {
	name string
	has  func(base string) bool
}{
	{"CUSTOM", nil},
	{"HTTP", func(b string) bool { return strings.HasPrefix(b, "http_req") }},
	{"GRPC", func(b string) bool { return strings.HasPrefix(b, "grpc_") }},
	{"WEBSOCKET", func(b string) bool { return strings.HasPrefix(b, "ws_") }},
	{"EXECUTION", func(b string) bool {
		switch b {
		case "iteration_duration", "iterations", "vus", "vus_max", "dropped_iterations", "group_duration":
			return true
		}
		return false
	}},
	{"NETWORK", func(b string) bool { return b == "data_received" || b == "data_sent" }},
}

func categoryOf(base string) int {
	for i, c := range categories[1:] {
		if c.has(base) {
			return i + 1
		}
	}
	return 0
}

// row is one metric line: its label and its value cells.
type row struct {
	indent      int
	label, base string
	cells       []string
	trend       bool
}

// writeCompact prints s in k6's compact layout, or with full its full
// layout, and returns how many thresholds were crossed.
func writeCompact(w io.Writer, s *script.Summary, full bool) int {
	fmt.Fprintln(w)
	crossed := writeThresholds(w, s)
	fmt.Fprint(w, "  █ TOTAL RESULTS\n\n")
	writeResults(w, s, s.Metrics, s.Root.Checks, full)
	if full {
		writeGroupResults(w, s.Root.Groups, 2)
		for _, sc := range s.Scenarios {
			fmt.Fprintf(w, "\n  █ SCENARIO: %s\n\n", sc.Name)
			writeResults(w, s, sc.Metrics, nil, true)
		}
	}
	return crossed
}

// writeResults prints metrics as TOTAL RESULTS does: the checks' totals
// and the checks given, then the metrics by category.
func writeResults(w io.Writer, s *script.Summary, metrics []script.SummaryMetric, checkList []script.Check, full bool) {
	var checks *script.SummaryMetric
	byCat := make([][]row, len(categories))
	for i := range metrics {
		m := &metrics[i]
		base, label, indent := m.Name, m.Name, 0
		if j := strings.IndexByte(m.Name, '{'); j > 0 {
			base, indent = m.Name[:j], 2
			label = "{ " + strings.ReplaceAll(strings.TrimSuffix(m.Name[j+1:], "}"), ",", ", ") + " }"
		}
		switch {
		case m.Name == "checks":
			checks = m
			continue
		case base == "checks", !full && compactHidden[base]:
			continue
		}
		c := categoryOf(base)
		byCat[c] = append(byCat[c], row{indent: indent, label: label, base: base, cells: cellsOf(*m, s.TimeUnit), trend: m.Type == script.Trend})
	}
	if checks != nil {
		st := statMap(*checks)
		passes, fails := uint64(st["passes"]), uint64(st["fails"])
		total := passes + fails
		rate := 0.0
		if s.Duration > 0 {
			rate = float64(total) / s.Duration.Seconds()
		}
		writeRows(w, []row{
			{label: "checks_total", cells: []string{fmt.Sprint(total), k6Number(rate) + "/s"}},
			{label: "checks_succeeded", cells: []string{percent(passes, total), fmt.Sprintf("%d out of %d", passes, total)}},
			{label: "checks_failed", cells: []string{percent(fails, total), fmt.Sprintf("%d out of %d", fails, total)}},
		})
		fmt.Fprintln(w)
		if n := writeChecks(w, checkList, 4); n > 0 {
			fmt.Fprintln(w)
		}
	}
	// Column widths are shared by every section: the trends' apart.
	var all []row
	for _, rows := range byCat {
		all = append(all, rows...)
	}
	widths := map[bool][]int{}
	for _, r := range all {
		ws := widths[r.trend]
		for i, c := range r.cells {
			if i >= len(ws) {
				ws = append(ws, 0)
			}
			ws[i] = max(ws[i], utf8.RuneCountInString(c))
		}
		widths[r.trend] = ws
	}
	sep := false // a blank line goes between sections, none after the last
	for i, rows := range byCat {
		if len(rows) == 0 {
			continue
		}
		if sep {
			fmt.Fprintln(w)
		}
		sep = true
		sort.SliceStable(rows, func(a, b int) bool {
			if rows[a].base != rows[b].base {
				return rows[a].base < rows[b].base
			}
			return rows[a].indent < rows[b].indent
		})
		fmt.Fprintf(w, "    %s\n", categories[i].name)
		for _, r := range rows {
			writeRow(w, r, widths[r.trend])
		}
	}
}

// writeThresholds prints the THRESHOLDS section (nothing when there are
// none) and returns how many were crossed.
func writeThresholds(w io.Writer, s *script.Summary) int {
	crossed := 0
	var with []script.SummaryMetric
	for _, m := range s.Metrics {
		if len(m.Thresholds) > 0 {
			with = append(with, m)
		}
	}
	if len(with) == 0 {
		return 0
	}
	sort.SliceStable(with, func(a, b int) bool { return with[a].Name < with[b].Name })
	fmt.Fprint(w, "  █ THRESHOLDS\n\n")
	for _, m := range with {
		fmt.Fprintf(w, "    %s\n", m.Name)
		for _, th := range m.Thresholds {
			mark := "✓"
			if !th.OK {
				mark, crossed = "✗", crossed+1
			}
			stat := thresholdStat(th.Source)
			fmt.Fprintf(w, "    %s '%s' %s=%s\n", mark, th.Source, stat, statValue(m, stat, th.Value, s.TimeUnit))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	return crossed
}

// thresholdStat is the aggregation a threshold expression compares
// ("p(95)" of "p(95)<1500").
func thresholdStat(src string) string {
	if i := strings.IndexAny(src, "<>=!"); i > 0 {
		return strings.TrimSpace(src[:i])
	}
	return strings.TrimSpace(src)
}

// statValue is a threshold's compared value as the summary prints it: a
// Rate's rate in per cent, a count plain, else in the metric's unit.
func statValue(m script.SummaryMetric, stat string, x float64, unit string) string {
	switch {
	case m.Type == script.Rate && stat == "rate":
		return fmt.Sprintf("%.2f%%", 100*x)
	case stat == "count" && m.Type != script.Counter:
		return k6Number(x)
	case m.Type == script.Counter && stat == "rate":
		return k6Number(x) + "/s"
	}
	return metricValue(m, x, unit)
}

// metricValue is one of m's figures in its unit: a time, bytes, or a
// plain number.
func metricValue(m script.SummaryMetric, x float64, unit string) string {
	switch {
	case m.IsTime:
		return k6Time(x, unit)
	case m.Contains() == "data":
		return k6Bytes(x)
	}
	return k6Number(x)
}

func statMap(m script.SummaryMetric) map[string]float64 {
	st := map[string]float64{}
	for _, s := range m.Stats {
		st[s.Name] = s.Value
	}
	return st
}

// cellsOf are a metric's value cells: a Counter's count and rate per
// second, a Rate's per cent and "N out of M", a Gauge's value, min and
// max, a Trend's summaryTrendStats as stat=value.
func cellsOf(m script.SummaryMetric, unit string) []string {
	v := func(x float64) string { return metricValue(m, x, unit) }
	st := statMap(m)
	switch m.Type {
	case script.Counter:
		return []string{v(st["count"]), v(st["rate"]) + "/s"}
	case script.Gauge:
		return []string{v(st["value"]), "min=" + v(st["min"]), "max=" + v(st["max"])}
	case script.Rate:
		p, f := uint64(st["passes"]), uint64(st["fails"])
		return []string{fmt.Sprintf("%.2f%%", 100*st["rate"]), fmt.Sprintf("%d out of %d", p, p+f)}
	}
	cells := make([]string, 0, len(m.Stats))
	for _, s := range m.Stats {
		if s.Name == "count" {
			cells = append(cells, "count="+k6Number(s.Value))
			continue
		}
		cells = append(cells, s.Name+"="+v(s.Value))
	}
	return cells
}

func percent(n, total uint64) string {
	if total == 0 {
		return "0.00%"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(total))
}

// writeRows prints rows aligned among themselves.
func writeRows(w io.Writer, rows []row) {
	var widths []int
	for _, r := range rows {
		for i, c := range r.cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		writeRow(w, r, widths)
	}
}

// writeRow prints one metric line: the label padded with dots, then its
// cells, each but the last padded to its column's width.
func writeRow(w io.Writer, r row, widths []int) {
	label := strings.Repeat(" ", r.indent) + r.label
	dots := strings.Repeat(".", max(labelWidth-utf8.RuneCountInString(label), 3))
	var b strings.Builder
	for i, c := range r.cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c)
		if i < len(r.cells)-1 && i < len(widths) {
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
		}
	}
	fmt.Fprintf(w, "    %s%s: %s\n", label, dots, b.String())
}

// writeChecks prints checks at indent (✓, or ✗ with the pass share and
// counts beneath) and returns how many it printed.
func writeChecks(w io.Writer, checks []script.Check, indent int) int {
	pad := strings.Repeat(" ", indent)
	for _, c := range checks {
		if c.Fails == 0 {
			fmt.Fprintf(w, "%s✓ %s\n", pad, c.Name)
			continue
		}
		share := 100 * float64(c.Passes) / float64(c.Passes+c.Fails)
		fmt.Fprintf(w, "%s✗ %s\n%s ↳  %s%% — ✓ %d / ✗ %d\n", pad, c.Name, pad, k6Number(math.Round(share)), c.Passes, c.Fails)
	}
	return len(checks)
}

// writeGroupResults prints each group's checks under █ GROUP: name, its
// groups nested beneath (full mode).
func writeGroupResults(w io.Writer, groups []*script.Group, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s█ GROUP: %s\n\n", pad, g.Name)
		writeChecks(w, g.Checks, indent+2)
		writeGroupResults(w, g.Groups, indent+2)
	}
}
