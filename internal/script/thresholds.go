package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/options"
)

// builtins are the k6 built-in metrics a run keeps, beside the script's
// own: what thresholds and the end summary read.
type builtins struct {
	httpReqs, httpReqDuration, httpReqFailed *Metric
	// expectedDuration is k6's http_req_duration{expected_response:true}:
	// the durations of requests that did not fail, fed directly (no tag
	// set built) and shown in every summary.
	expectedDuration *Metric
	// the parts of a request's time, as k6 names them (ms)
	blocked, connecting, tlsHandshaking, sending, waiting, receiving *Metric
	iterations, iterationDuration, checks                            *Metric
	groupDuration                                                    *Metric // each group() call's time (ms)
	dataSent, dataReceived                                           *Metric
	// vus (iterations in flight), vusMax (VUs made) are sampled once a
	// second while the scenarios run; droppedIterations counts arrivals
	// of a rate-mode scenario that found no free VU.
	vus, vusMax, droppedIterations *Metric
	// requestSet is the http_req_* and data_* metrics, iterationSet
	// iterations and iteration_duration: each recorded as one set.
	requestSet, iterationSet *metricSet
}

// newBuiltins registers k6's built-in metrics in ms (before the script can
// declare its own, and not passed to the custom-metric exporter).
func newBuiltins(ms *metrics) builtins {
	get := func(name string, t MetricType, isTime bool) *Metric {
		m, _ := ms.get(name, t, isTime)
		return m
	}
	sub := func(key string) *Metric {
		m, _ := ms.getKey(key, Trend, true)
		return m
	}
	b := builtins{
		httpReqs:          get("http_reqs", Counter, false),
		httpReqDuration:   get("http_req_duration", Trend, true),
		httpReqFailed:     get("http_req_failed", Rate, false),
		expectedDuration:  sub("http_req_duration{expected_response:true}"),
		blocked:           get("http_req_blocked", Trend, true),
		connecting:        get("http_req_connecting", Trend, true),
		tlsHandshaking:    get("http_req_tls_handshaking", Trend, true),
		sending:           get("http_req_sending", Trend, true),
		waiting:           get("http_req_waiting", Trend, true),
		receiving:         get("http_req_receiving", Trend, true),
		iterations:        get("iterations", Counter, false),
		iterationDuration: get("iteration_duration", Trend, true),
		groupDuration:     get("group_duration", Trend, true),
		checks:            get("checks", Rate, false),
		dataSent:          get("data_sent", Counter, false),
		dataReceived:      get("data_received", Counter, false),
		vus:               get("vus", Gauge, false),
		vusMax:            get("vus_max", Gauge, false),
		droppedIterations: get("dropped_iterations", Counter, false),
	}
	b.requestSet = newMetricSet(b.httpReqs, b.httpReqDuration, b.httpReqFailed, b.expectedDuration, b.blocked, b.connecting,
		b.tlsHandshaking, b.sending, b.waiting, b.receiving, b.dataSent, b.dataReceived)
	b.iterationSet = newMetricSet(b.iterations, b.iterationDuration)
	return b
}

// request records one resolved request in the built-in metrics, as one
// set under one lock (recordSet); tags (k6's system tags and the
// request's own) are built once, and only for sub-metrics or points.
func (b *builtins) request(phase string, t engine.Timings, failed bool, sent, received int, tags func() map[string]string) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	f := 0.0
	if failed {
		f = 1
	}
	var buf [12]metricValue // on the stack: recordSet keeps no reference
	vals := append(buf[:0],
		metricValue{b.httpReqs, 1}, metricValue{b.httpReqDuration, ms(t.Duration)},
		metricValue{b.blocked, ms(t.Blocked)}, metricValue{b.connecting, ms(t.Connecting)},
		metricValue{b.tlsHandshaking, ms(t.TLSHandshaking)}, metricValue{b.sending, ms(t.Sending)},
		metricValue{b.waiting, ms(t.Waiting)}, metricValue{b.receiving, ms(t.Receiving)},
		metricValue{b.httpReqFailed, f}, metricValue{b.dataSent, float64(sent)},
		metricValue{b.dataReceived, float64(received)})
	if !failed {
		// fed directly: a sub-metric of no sub-metric and no point hook,
		// so it never asks for the tags
		vals = append(vals, metricValue{b.expectedDuration, ms(t.Duration)})
	}
	recordSet(phase, b.requestSet, vals, tags)
}

// iteration records one finished iteration (d in ms) in iterations and
// iteration_duration, as one set.
func (b *builtins) iteration(phase string, d float64, tags func() map[string]string) {
	recordSet(phase, b.iterationSet, []metricValue{{b.iterations, 1}, {b.iterationDuration, d}}, tags)
}

// Threshold is one threshold expression on one metric (options.thresholds).
type Threshold struct {
	Metric string
	// Source is the expression as written, e.g. "p(95)<500".
	Source string
	// Filter is the tag filter of a sub-metric threshold
	// (http_req_duration{status:200}); nil for the whole metric.
	Filter map[string]string
	// AbortOnFail ends the run as soon as the threshold is crossed, once
	// DelayAbortEval has passed.
	AbortOnFail    bool
	DelayAbortEval time.Duration

	stat string  // avg, min, max, med, count, rate, value, p(N)
	pct  float64 // N of p(N)
	op   string
	rhs  float64
}

// ThresholdResult is a threshold's verdict.
type ThresholdResult struct {
	Threshold
	// Value is the statistic the threshold compared; OK its verdict.
	Value float64
	OK    bool
}

// thresholdsOf are the resolved options' thresholds in the runner's form.
func thresholdsOf(ths []options.Threshold) []Threshold {
	out := make([]Threshold, 0, len(ths))
	for _, th := range ths {
		out = append(out, Threshold{Metric: th.Key, Source: th.Source, Filter: th.Filter, AbortOnFail: th.AbortOnFail,
			DelayAbortEval: th.DelayAbortEval, stat: th.Stat, pct: th.Percentile, op: th.Op, rhs: th.Value})
	}
	return out
}

// baseName is a threshold key's metric name, without its tag filter.
func baseName(key string) string {
	if i := strings.IndexByte(key, '{'); i > 0 {
		return key[:i]
	}
	return key
}

// subMetric returns the metric a threshold reads: the metric itself, or
// for a tag filter its sub-metric, made (once per key) and attached to it
// before the run.
func (r *Runner) thresholdMetric(th Threshold) (*Metric, error) {
	parent := r.metric(baseName(th.Metric))
	if def, ok := protoMetrics[baseName(th.Metric)]; ok && parent == nil {
		// A protocol's built-in metric (ws_connecting, grpc_req_duration)
		// is otherwise made on its first sample; k6 knows it before.
		var err error
		if parent, err = r.custom.get(def.Name, protoType(def), def.Time); err != nil {
			return nil, err
		}
	}
	if parent == nil || th.Filter == nil {
		return parent, nil
	}
	if m := r.metric(th.Metric); m != nil {
		return m, nil
	}
	m, err := r.custom.getKey(th.Metric, parent.Type, parent.IsTime)
	if err != nil {
		return nil, err
	}
	parent.addSub(subMetric{filter: th.Filter, m: m})
	return m, nil
}

// check validates a threshold against its metric's type.
func (th Threshold) check(m *Metric) error {
	if m == nil {
		return fmt.Errorf("threshold on %q: no such metric (built-in or declared with k6/metrics)", baseName(th.Metric))
	}
	ok := map[MetricType][]string{
		Counter: {"count", "rate"},
		Gauge:   {"value", "min", "max"},
		Rate:    {"rate"},
		Trend:   {"avg", "min", "max", "med", "p", "count"},
	}[m.Type]
	for _, s := range ok {
		if s == th.stat {
			return nil
		}
	}
	return fmt.Errorf("threshold %q on %s %q: a %s has %s", th.Source, m.Type, th.Metric, m.Type, strings.Join(ok, ", "))
}

// eval evaluates the threshold over its metric; span is the run so far (a
// Counter's rate is per second).
func (th Threshold) eval(m *Metric, span time.Duration) ThresholdResult {
	v := statOf(m, m.Stats(), th.stat, th.pct, span)
	var ok bool
	switch th.op {
	case "<":
		ok = v < th.rhs
	case "<=":
		ok = v <= th.rhs
	case ">":
		ok = v > th.rhs
	case ">=":
		ok = v >= th.rhs
	case "==", "===":
		ok = v == th.rhs
	case "!=":
		ok = v != th.rhs
	}
	return ThresholdResult{Threshold: th, Value: v, OK: ok}
}

// statOf is a metric's statistic as thresholds and the summary name it:
// avg, min, max, med, p (the pct-th percentile), value, count (a
// Counter's sum, otherwise how many values), rate (a Counter's sum per
// second of span, otherwise the share of non-zero values).
func statOf(m *Metric, st MetricStats, stat string, pct float64, span time.Duration) float64 {
	var v float64
	switch stat {
	case "avg":
		v = st.Avg
	case "min":
		v = st.Min
	case "max":
		v = st.Max
	case "med":
		v = st.Med
	case "p":
		v = m.Quantile(pct)
	case "value":
		v = st.Last
	case "count":
		v = float64(st.Count)
		if m.Type == Counter {
			v = st.Sum
		}
	case "rate":
		if m.Type == Counter {
			v = st.Sum / math.Max(span.Seconds(), 1e-9)
		} else if st.Count > 0 {
			v = float64(st.NonZero) / float64(st.Count)
		}
	}
	return v
}

// Quantile is a Trend's q-th percentile (0-100), within the values seen.
func (m *Metric) Quantile(q float64) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Type != Trend {
		return 0
	}
	return m.quantile(q)
}

// Thresholds evaluates the script's thresholds now.
func (r *Runner) Thresholds() []ThresholdResult {
	span := time.Since(r.started)
	out := make([]ThresholdResult, 0, len(r.thresholds))
	for _, th := range r.thresholds {
		out = append(out, th.eval(r.metric(th.Metric), span))
	}
	return out
}

// metric is the metric called name, or nil.
func (r *Runner) metric(name string) *Metric {
	r.custom.mu.Lock()
	defer r.custom.mu.Unlock()
	return r.custom.m[name]
}

// watchThresholds ends the run when an abortOnFail threshold is crossed
// after its delay: checked twice a second until done closes.
func (r *Runner) watchThresholds(done <-chan struct{}) {
	var abort []Threshold
	for _, th := range r.thresholds {
		if th.AbortOnFail {
			abort = append(abort, th)
		}
	}
	if len(abort) == 0 {
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		span := time.Since(r.started)
		for _, th := range abort {
			if span < th.DelayAbortEval {
				continue
			}
			if res := th.eval(r.metric(th.Metric), span); !res.OK {
				r.abortTest(fmt.Sprintf("threshold %s on %s crossed (%v)", th.Source, th.Metric, strconv.FormatFloat(res.Value, 'g', 6, 64)))
				return
			}
		}
	}
}
