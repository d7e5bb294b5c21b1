package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// result is one finished run: what it printed, its exit code, its summary
// (or why there is none) and the server's counts.
type result struct {
	folder         string
	code           int
	stdout, stderr string
	sum            summary
	sumErr         error
	srv            *target
}

// judge returns "" when the run meets e, else "expected …, got …".
func (r result) judge(e expectation) string {
	w := e.words
	switch e.kind {
	case "exit":
		if !e.want.holds(float64(r.code)) {
			return fmt.Sprintf("exit: expected %s, got %d", e.want, r.code)
		}
	case "metric":
		if r.sumErr != nil {
			return "metric " + w[0] + ": no summary: " + shortErr(r.sumErr)
		}
		stats, ok := r.sum.metrics[w[0]]
		if !ok {
			return fmt.Sprintf("metric %s %s: expected %s, got no such metric", w[0], w[1], e.want)
		}
		v, ok := stats[w[1]]
		if !ok {
			return fmt.Sprintf("metric %s: expected stat %s, got stats %s", w[0], w[1], keys(stats))
		}
		if !e.want.holds(v) {
			return fmt.Sprintf("metric %s %s: expected %s, got %s", w[0], w[1], e.want, formatNumber(v))
		}
	case "nometric":
		if r.sumErr != nil {
			return "nometric " + w[0] + ": no summary: " + shortErr(r.sumErr)
		}
		if stats, ok := r.sum.metrics[w[0]]; ok {
			return fmt.Sprintf("metric %s: expected absent, got %v", w[0], stats)
		}
	case "check":
		return r.judgeCheck(w)
	case "group":
		if r.sumErr != nil {
			return "group " + w[0] + ": no summary: " + shortErr(r.sumErr)
		}
		for _, g := range r.sum.groups {
			if g == w[0] {
				return ""
			}
		}
		return fmt.Sprintf("group %q: expected in the summary, got groups %q", w[0], r.sum.groups)
	case "threshold":
		if r.sumErr != nil {
			return "threshold: no summary: " + shortErr(r.sumErr)
		}
		crossed, ok := r.sum.thresholds[w[0]][w[1]]
		if !ok {
			return fmt.Sprintf("threshold %s %q: expected %s, got no such threshold", w[0], w[1], w[2])
		}
		got := map[bool]string{false: "ok", true: "crossed"}[crossed]
		if got != w[2] {
			return fmt.Sprintf("threshold %s %q: expected %s, got %s", w[0], w[1], w[2], got)
		}
	case "stdout":
		return judgeText("stdout", r.stdout, w)
	case "stderr":
		return judgeText("stderr", r.stderr, w)
	case "file":
		b, err := os.ReadFile(filepath.Join(r.folder, w[0]))
		if err != nil {
			return fmt.Sprintf("file %s: expected written, got %s", w[0], shortErr(err))
		}
		return judgeText("file "+w[0], string(b), w[1:])
	case "server", "distinct":
		hits, distinct := r.srv.hitsOn(w[0])
		got := map[string]int{"server": hits, "distinct": distinct}[e.kind]
		if !e.want.holds(float64(got)) {
			what := map[string]string{"server": "requests", "distinct": "distinct queries"}[e.kind]
			return fmt.Sprintf("server %s on %s: expected %s, got %d (server saw %s)", what, w[0], e.want, got, r.srv.paths())
		}
	}
	return ""
}

// judgeCheck compares a check's passes and fails, summed over every group
// that has a check of that name.
func (r result) judgeCheck(w []string) string {
	if r.sumErr != nil {
		return fmt.Sprintf("check %q: no summary: %s", w[0], shortErr(r.sumErr))
	}
	passes, _ := parseBound(w[1])
	fails, _ := parseBound(w[2])
	found := false
	var p, f float64
	for _, c := range r.sum.checks {
		if c.name == w[0] {
			found = true
			p += c.passes
			f += c.fails
		}
	}
	if !found {
		return fmt.Sprintf("check %q: expected %s/%s, got no such check", w[0], passes, fails)
	}
	if !passes.holds(p) || !fails.holds(f) {
		return fmt.Sprintf("check %q: expected passes/fails %s/%s, got %s/%s", w[0], passes, fails, formatNumber(p), formatNumber(f))
	}
	return ""
}

func judgeText(what, text string, w []string) string {
	switch w[0] {
	case "contains":
		if !strings.Contains(text, w[1]) {
			return fmt.Sprintf("%s: expected to contain %q, got %s", what, w[1], excerpt(text))
		}
	case "lacks":
		if strings.Contains(text, w[1]) {
			return fmt.Sprintf("%s: expected no %q, got it", what, w[1])
		}
	case "lines":
		want, _ := parseBound(w[1])
		n := len(strings.Split(strings.TrimRight(text, "\n"), "\n"))
		if strings.TrimSpace(text) == "" {
			n = 0
		}
		if !want.holds(float64(n)) {
			return fmt.Sprintf("%s: expected %s lines, got %d: %s", what, want, n, excerpt(text))
		}
	}
	return ""
}

// excerpt is the start of a text, on one line.
func excerpt(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "nothing"
	}
	if len(text) > 120 {
		text = text[:120] + "…"
	}
	return fmt.Sprintf("%q", text)
}

func shortErr(err error) string {
	if os.IsNotExist(err) {
		return "file not written"
	}
	return err.Error()
}

func keys(m map[string]float64) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}
