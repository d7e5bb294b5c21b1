package script

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/options"
)

// MetricType is a k6 custom metric's type (k6/metrics).
type MetricType uint8

// The k6 metric types.
const (
	Counter MetricType = iota // sums its values
	Gauge                     // keeps its last value (and min, max)
	Rate                      // the fraction of non-zero values
	Trend                     // statistics of its values: min, max, avg, percentiles
)

var metricTypeNames = [...]string{"counter", "gauge", "rate", "trend"}

func (t MetricType) String() string { return metricTypeNames[t] }

// Metric is one custom metric shared by every VU (a VU's `new Counter(name)`
// finds the same Metric by name). Its statistics are over the whole run;
// A threshold with a tag filter (name{tag:value}) makes a sub-metric that
// takes only the values whose tags match. It is safe for concurrent use.
type Metric struct {
	Name   string
	Type   MetricType
	IsTime bool

	// export, if set, passes every value on (Config.Custom's exporter),
	// with the name of the scenario that added it ("setup" for setup and
	// teardown).
	export func(phase string, v float64) error

	// point, if set, gets every value with its tags (Config.Points).
	point func(m *Metric, v float64, tags map[string]string)

	// subs are the sub-metrics thresholds asked for; fixed before the run.
	subs []subMetric
	// perScenario: the values are also kept per scenario, in scen
	// (summaryMode full; scenariosummary.go); fixed before the run.
	perScenario bool
	scen        map[string]*Metric // guarded by mu
	// route is what export, point, subs and perScenario ask of a value
	// beyond its record (routePass, routeTags), read by recordSet in one
	// load; reroute keeps it wherever they change (before the run).
	route uint8

	// mu guards what follows; metrics recorded together share one (the
	// built-ins a request or an iteration records: recordSet), so a
	// request takes one lock, not eleven. Never held while another
	// metric's mu is taken.
	mu *sync.Mutex
	// set, if not nil, is the set of metrics sharing mu (newMetricSet).
	set *metricSet
	tally
	hist *hdr.Histogram // Trend: values × trendScale; read through histogram()
	// zeros are a Trend's values that round to 0 in hist and are not in
	// it yet: a keep-alive request's blocked, connecting, tls_handshaking
	// and (read at once) receiving are 0, and four histogram records per
	// request were some 250 instructions. Counts do not depend on order.
	zeros int64
	// exact are a Trend's values while there are at most exactValues of
	// them: its percentiles then are exact, as k6's (a trend of whole
	// numbers has a whole median), and the histogram's beyond.
	exact []float64
	// histed is how many of exact's first values are in hist (or zeros);
	// the rest are put in by histogram(), when the histogram is needed: past
	// exactValues values, for a merge, or when asked. While every value is
	// exact nothing reads the histogram, so a value is stored once, not
	// also (some 60 instructions) in the histogram. Counts do not depend on
	// order, so the histogram is the one recording each value would make.
	histed int
	// buckets, past exactValues values, count the values by histogram
	// bucket before they go into hist (histcache.go); histogram() puts
	// them in. rested is the table while it rests (nil in buckets, its
	// counts in hist), until the count reaches plainUntil.
	buckets, rested *bucketCache
	plainUntil      uint64
	// pending, on an agent (Config.Deltas), is what the metric gained
	// since its last TakeDeltas; nil otherwise. spare is the one taken
	// before, emptied, that take puts in its place.
	pending, spare *pendingDelta
}

// tally is a metric's running figures over the values it got: count,
// how many were non-zero, sum, min, max and the last.
type tally struct {
	count, nonZero      uint64
	sum, min, max, last float64
}

// record counts v.
func (t *tally) record(v float64) {
	switch {
	case t.count == 0:
		t.min, t.max = v, v
	case v < t.min:
		t.min = v
	case v > t.max:
		t.max = v
	}
	t.count++
	t.sum += v
	t.last = v
	if v != 0 {
		t.nonZero++
	}
}

// exactValues is how many values a Trend keeps for exact percentiles.
const exactValues = 10_000

// trendScale keeps three decimals of a Trend's values (microseconds for a
// time trend in milliseconds) in the integer histogram.
const trendScale = 1000

// MetricStats are a metric's figures so far.
type MetricStats struct {
	Name   string
	Type   MetricType
	IsTime bool
	// Count is how many values were added; NonZero how many were non-zero
	// (a Rate's rate is NonZero / Count).
	Count, NonZero uint64
	// Sum, Min, Max and Last are over every value (Last a Gauge's value).
	Sum, Min, Max, Last float64
	// Avg, Med, P90, P95 are a Trend's (percentiles from its histogram, to
	// three significant digits).
	Avg, Med, P90, P95 float64
}

func (m *Metric) add(phase string, v float64) error {
	if err := m.pass(phase, v); err != nil {
		return err
	}
	m.mu.Lock()
	m.recordLocked(v)
	m.mu.Unlock()
	return nil
}

// pass gives v to what the metric passes its values on to before it
// records them: its scenario's copy (summaryMode full) and the exporter.
// m.mu must not be held (scenarioMetric takes it).
func (m *Metric) pass(phase string, v float64) error {
	if m.perScenario && phase != "" && phase != "setup" {
		_ = m.scenarioMetric(phase).add("", v)
	}
	if m.export != nil {
		return m.export(phase, v)
	}
	return nil
}

// recordLocked counts v in the metric's figures, m.mu held.
func (m *Metric) recordLocked(v float64) {
	m.record(v)
	if m.Type == Trend {
		if m.count <= exactValues {
			m.exact = append(m.exact, v) // and in hist when histogram() is called
		} else if c := m.buckets; c != nil {
			// histValue(v), inline. For 0.5 <= x < 2^52, x + 0.5 truncated
			// is math.Round's x: the sum is exact, or rounds up to a float
			// whose truncation is still Round's (below 0.5 it is not: 0.5 -
			// 2^-54 + 0.5 rounds to 1). From 2^32 (maxCacheable) on h,
			// Round's or not, is refused as histValue's is.
			if x := v * trendScale; x >= 0.5 {
				if h := int64(x + 0.5); uint64(h) < maxCacheable {
					// counted in its bucket's slot (bucketCache; inline: a
					// call would cost a third of it)
					k := bucketKey(uint64(h))
					if e := &c.slots[slotOf(k)]; e.key == uint32(k) && e.n != math.MaxUint32 {
						e.n++
					} else {
						c.put(uint32(k))
					}
				} else {
					_ = m.hist.RecordValue(h) // refused: too large
				}
			} else if x < 0.5 { // rounds to 0: also -0 and negatives
				m.zeros++
			} else { // NaN: as histValue makes it, whatever the platform's conversion gives
				m.histRecord(v)
			}
		} else {
			m.recordPlain(v) // the first value past exactValues, or a resting table's trend
		}
	}
	if m.pending != nil {
		m.pending.add(v, m.Type == Trend, m.exact != nil)
	}
}

// pastExact is a Trend's first record past exactValues, m.mu held: its
// exact values go into the histogram and are dropped (stored once, not
// with a write barrier per value), and the values from now on are counted
// by bucket (bucketCache).
func (m *Metric) pastExact() {
	m.histogram()
	m.exact, m.histed = nil, 0
	m.buckets = &bucketCache{m: m, since: m.count}
}

// histValue is v's value in a Trend's histogram: int64(math.Round(math.Max(v,
// 0) * trendScale)), rounding half away from zero as math.Round does, but
// without its calls (some 20 instructions a value, nine values a request).
// A scaled value below 2^52 has an exact fraction (x - its truncation), so
// comparing that with 0.5 is Round's rule; anything else (2^52 and over,
// NaN) goes through math.Round.
func histValue(v float64) int64 {
	x := v * trendScale
	if x < 1<<52 {
		if x <= 0 { // also math.Max(v, 0): -0 and negatives
			return 0
		}
		t := int64(x)
		if x-float64(t) >= 0.5 {
			t++
		}
		return t
	}
	return int64(math.Round(math.Max(v, 0) * trendScale))
}

// quantile is a Trend's q-th percentile (0-100), m.mu held: exact, by
// linear interpolation between the closest ranks, while the values are
// kept; else from the histogram, within the values seen.
func (m *Metric) quantile(q float64) float64 {
	if m.count == 0 {
		return 0
	}
	if n := len(m.exact); n > 0 && uint64(n) == m.count {
		s := slices.Clone(m.exact)
		slices.Sort(s)
		i := q / 100 * float64(n-1)
		lo, hi := s[int(math.Floor(i))], s[int(math.Ceil(i))]
		return lo + (hi-lo)*(i-math.Floor(i))
	}
	return math.Min(math.Max(float64(m.histogram().ValueAtQuantile(q))/trendScale, m.min), m.max)
}

// histRecord puts v in a Trend's histogram (a zero in zeros), m.mu held.
func (m *Metric) histRecord(v float64) {
	if x := histValue(v); x != 0 {
		_ = m.hist.RecordValue(x)
	} else {
		m.zeros++
	}
}

// histogram is a Trend's histogram with every value in it, m.mu held: the
// exact values not in it yet, the zeros and the bucket table's counts are
// put in first. Everything that reads hist goes through it.
func (m *Metric) histogram() *hdr.Histogram {
	for _, v := range m.exact[m.histed:] {
		m.histRecord(v)
	}
	m.histed = len(m.exact)
	if m.zeros != 0 {
		_ = m.hist.RecordValues(0, m.zeros)
		m.zeros = 0
	}
	if m.buckets != nil {
		m.buckets.flush()
	}
	return m.hist
}

// subMetric is a metric over the values whose tags include filter.
type subMetric struct {
	filter map[string]string
	m      *Metric
}

// addTagged adds v, and to every sub-metric whose filter the tags match;
// tags is called only when there are sub-metrics or a point hook, so
// untagged runs build no tag sets.
func (m *Metric) addTagged(phase string, v float64, tags func() map[string]string) error {
	if err := m.add(phase, v); err != nil || !m.tagged() {
		return err
	}
	m.fanOut(phase, v, tags())
	return nil
}

// tagged says whether the metric's values need their tags: for a point
// hook or a sub-metric.
func (m *Metric) tagged() bool { return m.route&routeTags != 0 }

// The bits of Metric.route.
const (
	routePass = 1 << iota // a value is passed on first: a scenario's copy, an exporter (recordEach)
	routeTags             // a value's tags are wanted: a point hook, a sub-metric (fanOut)
)

// reroute sets route from export, point, subs and perScenario; whatever
// sets one of them calls it.
func (m *Metric) reroute() {
	m.route = 0
	if m.perScenario || m.export != nil {
		m.route |= routePass
	}
	if len(m.subs) > 0 || m.point != nil {
		m.route |= routeTags
	}
	if m.set != nil {
		m.set.reroute()
	}
}

// addSub gives the metric a sub-metric (a threshold's tag filter).
func (m *Metric) addSub(s subMetric) {
	m.subs = append(m.subs, s)
	m.reroute()
}

// keepPerScenario makes the metric keep its values per scenario too.
func (m *Metric) keepPerScenario() {
	m.perScenario = true
	m.reroute()
}

// fanOut gives v, already recorded, with its tags t to the point hook and
// to every sub-metric whose filter t matches. t is only read.
func (m *Metric) fanOut(phase string, v float64, t map[string]string) {
	if m.point != nil {
		m.point(m, v, t)
	}
	for _, s := range m.subs {
		match := true
		for k, want := range s.filter {
			if t[k] != want {
				match = false
				break
			}
		}
		if match {
			_ = s.m.add(phase, v)
		}
	}
}

// Stats returns the metric's figures.
func (m *Metric) Stats() MetricStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := MetricStats{Name: m.Name, Type: m.Type, IsTime: m.IsTime, Count: m.count, NonZero: m.nonZero,
		Sum: m.sum, Min: m.min, Max: m.max, Last: m.last}
	if m.count > 0 {
		s.Avg = m.sum / float64(m.count)
	}
	if m.Type == Trend && m.count > 0 {
		s.Med, s.P90, s.P95 = m.quantile(50), m.quantile(90), m.quantile(95)
	}
	return s
}

// Contains is k6's "contains" of the metric: time, data (data_sent,
// data_received) or default.
func (m *Metric) Contains() string { return contains(m.Name, m.IsTime) }

func contains(name string, isTime bool) string {
	switch {
	case isTime:
		return "time"
	case baseName(name) == "data_sent" || baseName(name) == "data_received":
		return "data"
	}
	return "default"
}

// metricName is k6's rule for a metric's name.
var metricName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,127}$`)

// metrics is a run's custom metrics by name.
type metrics struct {
	mu     sync.Mutex
	m      map[string]*Metric
	export func(name string, t MetricType) (func(phase string, v float64) error, error)
	points func(m *Metric, v float64, tags map[string]string)
	// perScenario is given to every metric made (keepPerScenario).
	perScenario bool
	// deltas: every metric made keeps what it gains for TakeDeltas.
	deltas bool
}

// get returns the metric name, making it on first use; a second
// declaration must agree on its type.
func (ms *metrics) get(name string, t MetricType, isTime bool) (*Metric, error) {
	if !metricName.MatchString(name) {
		return nil, fmt.Errorf("metric name %q: want letters, digits and _, starting with a letter or _, at most 128", name)
	}
	return ms.getKey(name, t, isTime)
}

// newMetric is a metric of its own lock, a Trend with its histogram.
func newMetric(name string, t MetricType, isTime bool) *Metric {
	m := &Metric{Name: name, Type: t, IsTime: isTime, mu: new(sync.Mutex)}
	if t == Trend {
		m.hist = newTrendHist()
	}
	return m
}

// getKey is get for any key: a name, or a sub-metric's name{tags}, which
// is not exported.
func (ms *metrics) getKey(name string, t MetricType, isTime bool) (*Metric, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if m, ok := ms.m[name]; ok {
		if m.Type != t {
			return nil, fmt.Errorf("metric %q is already a %s, not a %s", name, m.Type, t)
		}
		return m, nil
	}
	m := newMetric(name, t, isTime)
	if ms.export != nil && metricName.MatchString(name) {
		f, err := ms.export(name, t)
		if err != nil {
			return nil, err
		}
		m.export = f
	}
	if ms.deltas {
		m.pending = newPending(t)
	}
	if metricName.MatchString(name) {
		m.point = ms.points
		m.perScenario = ms.perScenario
	}
	m.reroute()
	if ms.m == nil {
		ms.m = map[string]*Metric{}
	}
	ms.m[name] = m
	return m, nil
}

// Metrics are the script's custom metrics, sorted by name: what the end
// summary and a metrics exporter read.
func (r *Runner) Metrics() []*Metric {
	r.custom.mu.Lock()
	defer r.custom.mu.Unlock()
	out := make([]*Metric, 0, len(r.custom.m))
	for _, m := range r.custom.m {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// metricsModule is "k6/metrics": Counter, Gauge, Rate, Trend, each
// constructed as `new Counter(name[, isTime])` (in the init context, as k6
// requires) with add(value[, tags]).
func (vu *VU) metricsModule() *sobek.Object {
	rt := vu.rt
	o := rt.NewObject()
	for name, t := range map[string]MetricType{"Counter": Counter, "Gauge": Gauge, "Rate": Rate, "Trend": Trend} {
		_ = o.Set(name, func(call sobek.ConstructorCall) *sobek.Object {
			if !vu.inInit {
				vu.throw("new %s(...): metrics must be made in the init context", name)
			}
			m, err := vu.r.custom.get(call.Argument(0).String(), t, call.Argument(1).ToBoolean())
			if err != nil {
				vu.throw("%v", err)
			}
			obj := call.This
			_ = obj.Set("name", m.Name)
			_ = obj.Set("add", func(c sobek.FunctionCall) sobek.Value {
				v := c.Argument(0)
				f := v.ToFloat()
				if b, ok := v.Export().(bool); ok && b {
					f = 1
				} else if ok {
					f = 0
				}
				if math.IsNaN(f) || math.IsInf(f, 0) {
					// k6: an exception under the throw option, else a
					// warning, and the value is dropped.
					if !vu.r.opts.Throw {
						vu.r.cfg.Logger.Warn(fmt.Sprintf("%s.add: %v is not a number; the value is dropped", m.Name, v))
						return sobek.Undefined()
					}
					vu.throw("%s.add: %v is not a number", m.Name, v)
				}
				phase := "setup"
				if vu.ph != nil {
					phase = vu.ph.sc.Name
				}
				if err := m.addTagged(phase, f, func() map[string]string { return vu.tags(c.Argument(1)) }); err != nil {
					vu.throw("%v", err)
				}
				return sobek.Undefined()
			})
			return nil
		})
	}
	return o
}

// tags are a sample's tags: the scenario's name and tags, the group, then
// the tags object given (nil or undefined: none), in a map of their own.
func (vu *VU) tags(extra sobek.Value) map[string]string {
	return vu.fillTags(make(map[string]string, 8), extra)
}

// fillTags writes vu.tags(extra) into t, which is empty, and returns it.
func (vu *VU) fillTags(t map[string]string, extra sobek.Value) map[string]string {
	t["group"] = vu.group
	for k, v := range vu.r.opts.Tags { // options.tags and --tag
		t[k] = v
	}
	if vu.ph != nil {
		t["scenario"] = vu.ph.sc.Name
		for k, v := range vu.ph.sc.Tags {
			t[k] = v
		}
	}
	for _, o := range [...]sobek.Value{vu.vuTags, extra} {
		if o, ok := o.(*sobek.Object); ok && o != nil {
			for _, k := range o.Keys() {
				t[k] = o.Get(k).String()
			}
		}
	}
	return t
}

// tagSet is the tag set of one recorded value (or one set of values),
// built on first use in a reused map: the set lives only while the value
// is recorded (sub-metrics match it, a point hook reads it during its
// call: Config.Points), so a run whose values need their tags (a point
// hook, as every agent and --out has, or a tag-filtered threshold) does
// not make a new map for every request, check and iteration. Its zero value is ready; release it once the value is
// recorded.
type tagSet struct{ m map[string]string }

// tagMaps are released tag sets' maps, empty.
var tagMaps = sync.Pool{New: func() any { return make(map[string]string, 8) }}

// maxPooledTags bounds the maps kept: one grown by a script's many tags
// is left to the GC.
const maxPooledTags = 64

// get returns the set's map, empty on first use.
func (s *tagSet) get() map[string]string {
	if s.m == nil {
		s.m = tagMaps.Get().(map[string]string)
	}
	return s.m
}

// release gives the map back; the set is empty again.
func (s *tagSet) release() {
	if s.m == nil {
		return
	}
	if len(s.m) <= maxPooledTags {
		clear(s.m)
		tagMaps.Put(s.m)
	}
	s.m = nil
}

// ownTags is exec.vu.tags, made on first use: one object per VU.
func (vu *VU) ownTags() *sobek.Object {
	if vu.vuTags == nil {
		vu.vuTags = vu.rt.NewObject()
	}
	return vu.vuTags
}

// builtinTags are the system tags throttle writes into a value's tag set
// itself; the other system tags come into one only by a name the options
// or the script gave a tag (namedTags).
var builtinTags = []string{"group", "scenario", "method", "url", "name", "status", "expected_response", "check"}

// namedTags says whether vu's tag sets (with extra) carry tags named by the
// options or the script: options.tags, the scenario's, exec.vu.tags, extra.
func (vu *VU) namedTags(extra sobek.Value) bool {
	if len(vu.r.opts.Tags) > 0 || vu.vuTags != nil || vu.ph != nil && len(vu.ph.sc.Tags) > 0 {
		return true
	}
	o, ok := extra.(*sobek.Object)
	return ok && o != nil
}

// dropSystemTags removes the system tags options.systemTags leaves out
// (every one before the options are resolved). named says t may hold tags
// the options or the script named (namedTags); without them, and with
// every built-in tag in force (the default), there is nothing to remove.
func (r *Runner) dropSystemTags(t map[string]string, named bool) map[string]string {
	if !named && r.keepsBuiltinTags {
		return t
	}
	drop := r.droppedTags
	if r.systemTags == nil {
		drop = options.SystemTagNames
	}
	for _, name := range drop {
		delete(t, name)
	}
	return t
}
