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

// shareLock makes the metrics record under one lock (before any is used).
func shareLock(ms ...*Metric) {
	mu := new(sync.Mutex)
	for _, m := range ms {
		m.mu = mu
	}
}

// recordSet records vals, whose metrics share the lock mu, in phase: each
// value recorded under one lock, then given with its tags to point hooks
// and sub-metrics. tags is called at most once, and only if a metric of
// the set needs it. A set with a scenario copy (summaryMode full) or an
// exporter goes value by value (recordEach).
func recordSet(phase string, mu *sync.Mutex, vals []metricValue, tags func() map[string]string) {
	var route uint8
	for i := range vals {
		route |= vals[i].m.route
	}
	if route&routePass != 0 {
		recordEach(phase, vals, tags)
		return
	}
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
