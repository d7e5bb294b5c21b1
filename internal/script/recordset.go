package script

import "sync"

// A request's built-in metrics are recorded as one set: the http_req_*
// and data_* metrics share one lock (newBuiltins), taken once for the
// request's eleven values, and the request's tag set, when a sub-metric
// or a point hook needs it, is built once for all of them. What every
// metric records is what Metric.addTagged would have recorded for each
// value in turn; only the lock and the tag set are shared.

// metricValue is one value of a set, for one metric.
type metricValue struct {
	m *Metric
	v float64
}

// metricSet is metrics recorded together: one lock for all, and the union
// of their routes, so recordSet reads one byte, not one per value.
type metricSet struct {
	mu      sync.Mutex
	members []*Metric
	// route is every member's route or'ed; Metric.reroute keeps it.
	route uint8
}

// newMetricSet makes the metrics record under one lock (before any is used).
func newMetricSet(ms ...*Metric) *metricSet {
	s := &metricSet{members: ms}
	for _, m := range ms {
		m.mu, m.set = &s.mu, s
	}
	s.reroute()
	return s
}

// reroute sets route from the members'.
func (s *metricSet) reroute() {
	s.route = 0
	for _, m := range s.members {
		s.route |= m.route
	}
}

// recordSet records vals, metrics of set s, in phase: each value recorded
// under the set's lock, then given with its tags to point hooks and
// sub-metrics. tags is called at most once, and only if a metric of the
// set needs it. A set with a scenario copy (summaryMode full) or an
// exporter goes value by value (recordEach); a member's route counts even
// when vals leave it out.
func recordSet(phase string, s *metricSet, vals []metricValue, tags func() map[string]string) {
	route := s.route
	if route&routePass != 0 {
		recordEach(phase, vals, tags)
		return
	}
	mu := &s.mu
	mu.Lock()
	for i := range vals {
		vals[i].m.recordLocked(vals[i].v)
	}
	mu.Unlock()
	if route&routeTags == 0 {
		return
	}
	t := tags()
	for _, mv := range vals {
		mv.m.fanOut(phase, mv.v, t)
	}
}

// recordEach is recordSet for a set whose values are also passed on (a
// scenario's copy, an exporter that may refuse a value): each value as
// Metric.addTagged records it, one lock each, the tag set still built once.
func recordEach(phase string, vals []metricValue, tags func() map[string]string) {
	var t map[string]string
	once := func() map[string]string {
		if t == nil {
			t = tags()
		}
		return t
	}
	for _, mv := range vals {
		_ = mv.m.addTagged(phase, mv.v, once)
	}
}
