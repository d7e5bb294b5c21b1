package script

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// ScenarioSummary is one scenario's metrics for the full summary's
// SCENARIO section: each metric over the values its scenario added.
type ScenarioSummary struct {
	Name    string
	Metrics []SummaryMetric
}

// keepPerScenario makes every metric (those made later too) keep its
// values per scenario as well (summaryMode full); called before the run.
func (ms *metrics) keepPerScenario() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.perScenario = true
	for name, m := range ms.m {
		if metricName.MatchString(name) {
			m.keepPerScenario()
		}
	}
}

// scenarioMetric is m's metric over the values scenario added, made on
// first use.
func (m *Metric) scenarioMetric(scenario string) *Metric {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scen[scenario]
	if s == nil {
		s = newMetric(m.Name, m.Type, m.IsTime)
		if m.pending != nil {
			s.pending = newPending(m.Type)
		}
		if m.scen == nil {
			m.scen = map[string]*Metric{}
		}
		m.scen[scenario] = s
	}
	return s
}

// scenarios are m's per-scenario copies by scenario, read under its lock.
func (m *Metric) scenarios() map[string]*Metric {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.scen)
}

// scenarioSummaries are the metrics of each scenario that added values,
// scenarios and metrics sorted by name; nil unless keepPerScenario.
func (r *Runner) scenarioSummaries(span time.Duration) []ScenarioSummary {
	by := map[string][]SummaryMetric{}
	for _, m := range r.Metrics() {
		if !m.perScenario {
			continue
		}
		for name, s := range m.scenarios() {
			st := s.Stats()
			if st.Count == 0 {
				continue
			}
			by[name] = append(by[name], SummaryMetric{MetricStats: st, Stats: r.stats(s, st, span)})
		}
	}
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	slices.Sort(names)
	out := make([]ScenarioSummary, 0, len(names))
	for _, name := range names {
		ms := by[name]
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		out = append(out, ScenarioSummary{Name: name, Metrics: ms})
	}
	return out
}
