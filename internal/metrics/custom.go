package metrics

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Kind is the type a k6 script gives a custom metric (k6/metrics).
type Kind uint8

// The k6 metric types.
const (
	Counter Kind = iota // a sum of added values
	Gauge               // the last value added
	Rate                // the fraction of added values that are non-zero
	Trend               // a distribution of added values
)

var kindNames = [...]string{Counter: "Counter", Gauge: "Gauge", Rate: "Rate", Trend: "Trend"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Custom is one custom metric a script declared, exported under the name it
// declared with a phase label (the scenario its samples come from). How each
// type is exported:
//
//	Counter  a counter NAME: the sum of the values added (each must be >= 0)
//	Gauge    a gauge NAME: the last value added
//	Rate     a counter NAME{outcome="nonzero"|"zero"}: the values added, by
//	         whether they were non-zero; the rate over a range is
//	         sum(rate(NAME{outcome="nonzero"}[1m])) / sum(rate(NAME[1m]))
//	Trend    a histogram NAME (NAME_bucket, NAME_sum, NAME_count) with the
//	         buckets of TrendBounds, plus native buckets (factor 1.1) for a
//	         scraper that takes them
//
// Samples carry no labels but phase: a script's tags (URLs, statuses, its
// own) are unbounded and would multiply the series. A nil *Custom ignores
// what it is given, so a runner with --metrics off calls it all the same.
type Custom struct {
	name    string
	kind    Kind
	counter *prometheus.CounterVec
	gauge   *prometheus.GaugeVec
	hist    *prometheus.HistogramVec
}

// TrendBounds are a Trend's classic bucket bounds: 1, 2 and 5 per decade
// from 0.001 to 1 000 000, wide enough for k6 time trends (milliseconds)
// and for counts alike, since a script declares no scale.
var TrendBounds = trendBounds()

func trendBounds() []float64 {
	var b []float64
	for decade := 1e-3; decade < 2e6; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * decade; v <= 1e6*1.0000001 {
				b = append(b, math.Round(v*1e6)/1e6)
			}
		}
	}
	return b
}

// metricName is Prometheus' classic metric name rule, which every scraper
// and PromQL dashboard accepts.
var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// reservedPrefix belongs to throttle's own series.
const reservedPrefix = "throttle_"

// Custom is the registration hook of a script runner: it returns the
// exporter of the custom metric a script declared (new Counter('name') and
// so on). Declaring the same name with the same kind again returns the same
// metric, since k6 runs a script's init code once per VU. It fails for a
// name Prometheus would reject, a throttle_ name, a name declared with
// another kind, or one whose exposition would collide with another custom
// metric's (a Trend "x" takes x_bucket, x_sum and x_count). A nil Registry
// (--metrics off) returns a nil *Custom and no error.
func (r *Registry) Custom(name string, kind Kind) (*Custom, error) {
	if r == nil {
		return nil, nil
	}
	if int(kind) >= len(kindNames) {
		return nil, fmt.Errorf("metrics: custom metric %q: unknown kind %v", name, kind)
	}
	if !metricName.MatchString(name) {
		return nil, fmt.Errorf("metrics: custom metric %q: a Prometheus name is letters, digits, _ and :, not starting with a digit", name)
	}
	if strings.HasPrefix(name, reservedPrefix) {
		return nil, fmt.Errorf("metrics: custom metric %q: the %s prefix is throttle's own", name, reservedPrefix)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.custom[name]; ok {
		if c.kind != kind {
			return nil, fmt.Errorf("metrics: custom metric %q is already a %v, not a %v", name, c.kind, kind)
		}
		return c, nil
	}
	names := []string{name}
	if kind == Trend {
		names = append(names, name+"_bucket", name+"_sum", name+"_count")
	}
	for _, n := range names {
		if other, ok := r.taken[n]; ok {
			return nil, fmt.Errorf("metrics: custom metric %q would export %s, which custom metric %q exports", name, n, other)
		}
	}
	c := &Custom{name: name, kind: kind}
	help := fmt.Sprintf("A script's custom %v metric.", kind)
	var col prometheus.Collector
	switch kind {
	case Counter:
		c.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"phase"})
		col = c.counter
	case Gauge:
		c.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"phase"})
		col = c.gauge
	case Rate:
		c.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help + " Values added, by whether they were non-zero."}, []string{"phase", "outcome"})
		col = c.counter
	case Trend:
		c.hist = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: help, Buckets: TrendBounds,
			NativeHistogramBucketFactor: 1.1, NativeHistogramMaxBucketNumber: 160,
		}, []string{"phase"})
		col = c.hist
	}
	if err := r.reg.Register(col); err != nil {
		return nil, fmt.Errorf("metrics: custom metric %q: %w", name, err)
	}
	r.custom[name] = c
	for _, n := range names {
		r.taken[n] = name
	}
	return c, nil
}

// Name is the name the script declared.
func (c *Custom) Name() string { return c.name }

// Kind is the type the script declared.
func (c *Custom) Kind() Kind { return c.kind }

// Add records one sample the script added in phase: Counter adds v, Gauge
// sets it, Rate counts it as non-zero or zero, Trend observes it. It fails,
// recording nothing, for NaN, an infinity, or a negative Counter value
// (a Prometheus counter only grows). Safe for concurrent use; it costs a
// label lookup and an atomic update.
func (c *Custom) Add(phase string, v float64) error {
	if c == nil {
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("metrics: %s %q: value %v is not a finite number", c.kind, c.name, v)
	}
	switch c.kind {
	case Counter:
		if v < 0 {
			return fmt.Errorf("metrics: Counter %q: cannot add %v (a counter only grows)", c.name, v)
		}
		c.counter.WithLabelValues(phase).Add(v)
	case Gauge:
		c.gauge.WithLabelValues(phase).Set(v)
	case Rate:
		outcome := "zero"
		if v != 0 {
			outcome = "nonzero"
		}
		c.counter.WithLabelValues(phase, outcome).Inc()
	case Trend:
		c.hist.WithLabelValues(phase).Observe(v)
	}
	return nil
}
