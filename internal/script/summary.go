package script

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stat is one named statistic of a metric in a summary, e.g. "p(95)".
type Stat struct {
	Name  string
	Value float64
}

// SummaryMetric is one metric in the end-of-test summary: a metric with
// values, or a sub-metric a threshold made (Name "metric{tag:value}").
type SummaryMetric struct {
	MetricStats
	// Stats are k6's values of the metric, in k6's order: a Trend's
	// summaryTrendStats; a Counter's count, rate (per second of the run);
	// a Rate's rate, passes (non-zero values), fails; a Gauge's value,
	// min, max.
	Stats []Stat
	// Thresholds are the thresholds on this metric (or sub-metric).
	Thresholds []ThresholdResult
}

// Contains is k6's "contains" of the metric: time, data or default.
func (m SummaryMetric) Contains() string { return contains(m.Name, m.IsTime) }

// Group is a node of the summary's tree of groups and checks. The root is
// the script itself: name and path "". A group's path is its parent's
// path, "::", its name; a check's path is its group's path, "::", its
// name. ID is the MD5 of the path in hex, as in k6.
type Group struct {
	Name, Path, ID string
	Groups         []*Group
	Checks         []Check
}

// Check is one check's counts within its group.
type Check struct {
	Name, Path, ID string
	Passes, Fails  uint64
}

// Summary is a run's end-of-test summary: what the text summary,
// --summary-export and handleSummary(data) are made of.
type Summary struct {
	// Metrics are the metrics with at least one value or a threshold,
	// sorted by key (a threshold's sub-metric is "name{tag:value}").
	Metrics []SummaryMetric
	Root    *Group
	// TrendStats and TimeUnit are the summaryTrendStats and
	// summaryTimeUnit in force.
	TrendStats []string
	TimeUnit   string
	// NoColor is options.noColor, for handleSummary's data.
	NoColor bool
	// Duration is the run's span, setup to teardown.
	Duration time.Duration
	// Mode is summaryMode: compact, full or legacy (k6out's layouts; ""
	// is legacy).
	Mode string
	// Scenarios are the metrics of each scenario, by scenario name (full
	// mode only; scenariosummary.go).
	Scenarios []ScenarioSummary
}

func pathID(path string) string {
	h := md5.Sum([]byte(path))
	return hex.EncodeToString(h[:])
}

// Summary builds the end-of-test summary over the run so far; span is the
// run's duration (a Counter's rate is per second of it).
func (r *Runner) Summary(span time.Duration) *Summary {
	s := &Summary{TrendStats: r.trendStats, TimeUnit: r.timeUnit, NoColor: r.opts.NoColor, Duration: span, Root: r.checkTree(), Mode: r.opts.SummaryMode}
	byMetric := map[string][]ThresholdResult{}
	for _, th := range r.thresholds {
		byMetric[th.Metric] = append(byMetric[th.Metric], th.eval(r.metric(th.Metric), span))
	}
	for _, m := range r.Metrics() {
		st := m.Stats()
		ths := byMetric[m.Name]
		if st.Count == 0 && len(ths) == 0 {
			continue
		}
		s.Metrics = append(s.Metrics, SummaryMetric{MetricStats: st, Stats: r.stats(m, st, span), Thresholds: ths})
	}
	s.Scenarios = r.scenarioSummaries(span)
	return s
}

// stats are a metric's k6 values (SummaryMetric.Stats).
func (r *Runner) stats(m *Metric, st MetricStats, span time.Duration) []Stat {
	switch st.Type {
	case Counter:
		return []Stat{{"count", st.Sum}, {"rate", st.Sum / max(span.Seconds(), 1e-9)}}
	case Gauge:
		return []Stat{{"value", st.Last}, {"min", st.Min}, {"max", st.Max}}
	case Rate:
		rate := 0.0
		if st.Count > 0 {
			rate = float64(st.NonZero) / float64(st.Count)
		}
		return []Stat{{"rate", rate}, {"passes", float64(st.NonZero)}, {"fails", float64(st.Count - st.NonZero)}}
	}
	out := make([]Stat, 0, len(r.trendStats))
	for _, name := range r.trendStats {
		stat, pct := name, 0.0
		if strings.HasPrefix(name, "p(") { // checked by options.Resolve
			stat = "p"
			pct, _ = strconv.ParseFloat(name[2:len(name)-1], 64)
		}
		out = append(out, Stat{name, statOf(m, st, stat, pct, span)})
	}
	return out
}

// checkSets are the checks of setup and teardown, then of each phase.
func (r *Runner) checkSets() [][]CheckResult {
	sets := [][]CheckResult{r.setupChecks.results()}
	for _, p := range r.phases {
		sets = append(sets, p.Checks())
	}
	return sets
}

// checkTree merges every phase's checks into the tree of groups, checks
// and groups each in the order they were first seen.
func (r *Runner) checkTree() *Group {
	root := &Group{ID: pathID("")}
	groups := map[string]*Group{"": root}
	var group func(path string) *Group
	group = func(path string) *Group {
		if g, ok := groups[path]; ok {
			return g
		}
		i := strings.LastIndex(path, "::")
		parent := group(path[:i])
		g := &Group{Name: path[i+2:], Path: path, ID: pathID(path)}
		parent.Groups = append(parent.Groups, g)
		groups[path] = g
		return g
	}
	type merged struct {
		CheckResult
		seq uint64
	}
	idx := map[checkKey]int{}
	var all []merged
	for _, set := range r.checkSets() {
		for _, c := range set {
			k := checkKey{c.Group, c.Name}
			if i, ok := idx[k]; ok {
				all[i].Pass += c.Pass
				all[i].Failed += c.Failed
				all[i].seq = min(all[i].seq, c.seq)
				continue
			}
			idx[k] = len(all)
			all = append(all, merged{c, c.seq})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	for _, c := range all {
		g := group(c.Group)
		path := c.Group + "::" + c.Name
		g.Checks = append(g.Checks, Check{Name: c.Name, Path: path, ID: pathID(path), Passes: c.Pass, Fails: c.Failed})
	}
	return root
}

// ExportJSON is the summary in k6's --summary-export format: root_group
// (groups and checks keyed by name, checks with passes and fails) and
// metrics keyed by name, each its k6 values (a Rate's rate as "value")
// and, if it has thresholds, "thresholds": {expression: crossed}.
func (s *Summary) ExportJSON() ([]byte, error) {
	var group func(g *Group) map[string]any
	group = func(g *Group) map[string]any {
		gs := map[string]any{}
		for _, c := range g.Groups {
			gs[c.Name] = group(c)
		}
		cs := map[string]any{}
		for _, c := range g.Checks {
			cs[c.Name] = map[string]any{"name": c.Name, "path": c.Path, "id": c.ID, "passes": c.Passes, "fails": c.Fails}
		}
		return map[string]any{"name": g.Name, "path": g.Path, "id": g.ID, "groups": gs, "checks": cs}
	}
	metrics := map[string]any{}
	for _, m := range s.Metrics {
		o := map[string]any{}
		for _, st := range m.Stats {
			name := st.Name
			if m.Type == Rate && name == "rate" {
				name = "value"
			}
			o[name] = st.Value
		}
		if len(m.Thresholds) > 0 {
			th := map[string]bool{}
			for _, t := range m.Thresholds {
				th[t.Source] = !t.OK
			}
			o["thresholds"] = th
		}
		metrics[m.Name] = o
	}
	return json.MarshalIndent(map[string]any{"root_group": group(s.Root), "metrics": metrics}, "", "    ")
}

// DataJSON is the summary as k6's handleSummary(data) object: metrics
// keyed by name with type, contains, values and thresholds ({expression:
// {ok}}), root_group (groups and checks as arrays), options
// (summaryTrendStats, summaryTimeUnit, noColor) and state (isStdOutTTY,
// isStdErrTTY, testRunDurationMs).
func (s *Summary) DataJSON(stdoutTTY, stderrTTY bool) ([]byte, error) {
	var group func(g *Group) map[string]any
	group = func(g *Group) map[string]any {
		gs := make([]any, 0, len(g.Groups))
		for _, c := range g.Groups {
			gs = append(gs, group(c))
		}
		cs := make([]any, 0, len(g.Checks))
		for _, c := range g.Checks {
			cs = append(cs, map[string]any{"name": c.Name, "path": c.Path, "id": c.ID, "passes": c.Passes, "fails": c.Fails})
		}
		return map[string]any{"name": g.Name, "path": g.Path, "id": g.ID, "groups": gs, "checks": cs}
	}
	metrics := map[string]any{}
	for _, m := range s.Metrics {
		values := map[string]float64{}
		for _, st := range m.Stats {
			values[st.Name] = st.Value
		}
		o := map[string]any{"type": m.Type.String(), "contains": m.Contains(), "values": values}
		if len(m.Thresholds) > 0 {
			th := map[string]any{}
			for _, t := range m.Thresholds {
				th[t.Source] = map[string]bool{"ok": t.OK}
			}
			o["thresholds"] = th
		}
		metrics[m.Name] = o
	}
	return json.Marshal(map[string]any{
		"metrics":    metrics,
		"root_group": group(s.Root),
		"options":    map[string]any{"summaryTrendStats": s.TrendStats, "summaryTimeUnit": s.TimeUnit, "noColor": s.NoColor},
		"state": map[string]any{"isStdOutTTY": stdoutTTY, "isStdErrTTY": stderrTTY,
			"testRunDurationMs": float64(s.Duration) / float64(time.Millisecond)},
	})
}
