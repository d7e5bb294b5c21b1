package script

import (
	"fmt"
	"sort"
)

// Deltas are what a run's k6 metrics and checks gained since the last
// TakeDeltas: an agent's share of a run spread over agents, merged by the
// controller's runner (Merge) into the one set of metrics its summary,
// thresholds and handleSummary read. Only counts and histograms travel:
// counters and rates add up, trends merge their histograms (never their
// percentiles), a gauge keeps the value it got last.
type Deltas struct {
	Metrics []MetricDelta `json:"metrics,omitempty"`
	Checks  []CheckDelta  `json:"checks,omitempty"`
}

// MetricDelta is what one metric (a sub-metric: its name{tag:value} key;
// a scenario's copy under summaryMode full: Scenario) gained.
type MetricDelta struct {
	Name     string     `json:"name"`
	Scenario string     `json:"scenario,omitempty"`
	Type     MetricType `json:"type"`
	IsTime   bool       `json:"is_time,omitempty"`
	// Count values, NonZero of them non-zero (a Rate's passes).
	Count   uint64  `json:"count"`
	NonZero uint64  `json:"non_zero,omitempty"`
	Sum     float64 `json:"sum"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Last    float64 `json:"last"`
	// HistV and HistN are a Trend's histogram of these values, sparse: the
	// counts HistN of the filled buckets, each named by a value in it
	// (HistV, scaled by trendScale), of the metric's own HDR geometry, so
	// that each count lands in the same bucket of the controller's
	// histogram: the merged histogram is the one a single process has.
	HistV []int64 `json:"hist_v,omitempty"`
	HistN []int64 `json:"hist_n,omitempty"`
	// Exact are a Trend's values themselves, while the agent still keeps
	// its values exact (the controller keeps them while the merged count
	// is within exactValues, as one process does).
	Exact []float64 `json:"exact,omitempty"`
}

// CheckDelta is what one check gained.
type CheckDelta struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	Pass  uint64 `json:"pass"`
	Fail  uint64 `json:"fail"`
}

// pendingDelta is a metric's gain since the last take; the metric's mu
// guards it.
type pendingDelta struct {
	tally
	trend   *pendingTrend // a Trend's values by bucket, made at its first value
	exact   []float64
	exactOK bool // every value since the take is in exact
}

func newPending(MetricType) *pendingDelta { return &pendingDelta{exactOK: true} }

// add records v; exact says the metric still keeps its values exact.
func (p *pendingDelta) add(v float64, trend, exact bool) {
	p.record(v)
	if trend {
		if p.trend == nil {
			p.trend = newPendingTrend()
		}
		p.trend.add(histValue(v))
		if exact && p.exactOK {
			p.exact = append(p.exact, v)
		} else {
			p.exactOK, p.exact = false, nil
		}
	}
}

// reset empties p for the next take's values; its trend's table and
// histogram are kept (emptied by drain), so a tick allocates nothing.
func (p *pendingDelta) reset() {
	*p = pendingDelta{trend: p.trend, exactOK: true}
}

// take is m's delta since the last take, and starts over; ok false when
// it gained nothing. One goroutine takes (TakeDeltas): the delta taken is
// drained outside the lock and becomes the next take's spare.
func (m *Metric) take(scenario string) (MetricDelta, bool) {
	m.mu.Lock()
	p := m.pending
	if p == nil || p.count == 0 {
		m.mu.Unlock()
		return MetricDelta{}, false
	}
	d := MetricDelta{Name: m.Name, Scenario: scenario, Type: m.Type, IsTime: m.IsTime, Count: p.count, NonZero: p.nonZero,
		Sum: p.sum, Min: p.min, Max: p.max, Last: p.last}
	if p.exactOK {
		d.Exact = p.exact
	}
	next := m.spare
	if next == nil {
		next = newPending(m.Type)
	}
	m.pending, m.spare = next, nil
	m.mu.Unlock()
	if p.trend != nil {
		d.HistV, d.HistN = p.trend.drain()
	}
	p.reset()
	m.mu.Lock()
	m.spare = p
	m.mu.Unlock()
	return d, true
}

// TakeDeltas returns what every metric and check gained since the last
// call (Config.Deltas must be set) and starts over.
func (r *Runner) TakeDeltas() Deltas {
	var out Deltas
	for _, m := range r.Metrics() {
		if d, ok := m.take(""); ok {
			out.Metrics = append(out.Metrics, d)
		}
		for name, s := range m.scenarios() {
			if d, ok := s.take(name); ok {
				out.Metrics = append(out.Metrics, d)
			}
		}
	}
	now := map[checkKey]*CheckDelta{}
	for _, set := range r.checkSets() {
		for _, c := range set {
			k := checkKey{c.Group, c.Name}
			if now[k] == nil {
				now[k] = &CheckDelta{Group: c.Group, Name: c.Name}
			}
			now[k].Pass += c.Pass
			now[k].Fail += c.Failed
		}
	}
	r.deltaMu.Lock()
	defer r.deltaMu.Unlock()
	if r.sentChecks == nil {
		r.sentChecks = map[checkKey]CheckDelta{}
	}
	for k, c := range now {
		prev := r.sentChecks[k]
		if c.Pass == prev.Pass && c.Fail == prev.Fail {
			continue
		}
		out.Checks = append(out.Checks, CheckDelta{Group: c.Group, Name: c.Name, Pass: c.Pass - prev.Pass, Fail: c.Fail - prev.Fail})
		r.sentChecks[k] = *c
	}
	sort.Slice(out.Checks, func(i, j int) bool {
		return out.Checks[i].Group+"::"+out.Checks[i].Name < out.Checks[j].Group+"::"+out.Checks[j].Name
	})
	return out
}

// Merge adds the deltas of the agent source to this runner's metrics and
// checks (the controller's runner, which loaded the same script and runs
// nothing). A gauge keeps the last value any agent sent, but vus and
// vus_max, which count each instance's VUs, are the sum of every agent's
// last value, as the whole test's VUs.
func (r *Runner) Merge(source string, d Deltas) error {
	for _, md := range d.Metrics {
		m, err := r.custom.getKey(md.Name, md.Type, md.IsTime)
		if err != nil {
			return err
		}
		if md.Scenario != "" {
			m = m.scenarioMetric(md.Scenario)
		}
		if md.Type == Gauge && md.Scenario == "" && (md.Name == "vus" || md.Name == "vus_max") {
			md = r.summedGauge(source, md)
		}
		if err := m.merge(md); err != nil {
			return fmt.Errorf("metric %s: %w", md.Name, err)
		}
	}
	for _, c := range d.Checks {
		r.setupChecks.addN(c.Group, c.Name, c.Pass, c.Fail)
	}
	return nil
}

// summedGauge turns an agent's gauge delta into one of the sum over the
// agents: its last value replaces the agent's in the sum; min and max are
// the sum's own (the other agents' values held at their last).
func (r *Runner) summedGauge(source string, d MetricDelta) MetricDelta {
	r.deltaMu.Lock()
	defer r.deltaMu.Unlock()
	if r.gauges == nil {
		r.gauges = map[string]map[string]float64{}
	}
	by := r.gauges[d.Name]
	if by == nil {
		by = map[string]float64{}
		r.gauges[d.Name] = by
	}
	var others float64
	for src, v := range by {
		if src != source {
			others += v
		}
	}
	by[source] = d.Last
	d.Min, d.Max, d.Last = others+d.Min, others+d.Max, others+d.Last
	d.Sum = d.Last * float64(d.Count)
	return d
}

// merge adds d to m as if m had seen d's values itself.
func (m *Metric) merge(d MetricDelta) error {
	if d.Count == 0 {
		return nil
	}
	if len(d.HistV) != len(d.HistN) {
		return fmt.Errorf("a histogram of %d buckets and %d counts", len(d.HistV), len(d.HistN))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.count == 0 || d.Min < m.min {
		m.min = d.Min
	}
	if m.count == 0 || d.Max > m.max {
		m.max = d.Max
	}
	m.count += d.Count
	m.nonZero += d.NonZero
	m.sum += d.Sum
	m.last = d.Last
	if m.Type == Trend {
		// m's own exact values in the histogram first: d's come in by its
		// buckets, so its exact values are in it already
		h := m.histogram()
		for i, v := range d.HistV {
			if err := h.RecordValues(v, d.HistN[i]); err != nil {
				return err
			}
		}
		if m.count <= exactValues && uint64(len(m.exact)+len(d.Exact)) == m.count {
			m.exact = append(m.exact, d.Exact...)
			m.histed = len(m.exact)
		} else {
			m.exact, m.histed = nil, 0
		}
	}
	return nil
}

// addN adds pass and fail results of one check.
func (c *checks) addN(group, name string, pass, fail uint64) {
	n := c.count(checkKey{group, name})
	n.pass.Add(pass)
	n.fail.Add(fail)
}
