package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/throttlekit/throttle/internal/target"
)

// TargetSource is the built-in target as the exporter reads it:
// *target.Target.
type TargetSource interface {
	Stats() target.Stats
}

// AddTarget starts exporting a built-in target's own counters under the
// given phase label, read from its Stats at every scrape: what the target
// saw, beside what the engine measured of it.
func (r *Registry) AddTarget(phase string, t TargetSource) error {
	labels := prometheus.Labels{"phase": phase}
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("throttle_target_"+name, help, nil, labels)
	}
	return r.reg.Register(&targetCollector{
		t:         t,
		capacity:  d("capacity", "The built-in target's capacity now: req/s, or requests in service with --concurrent."),
		served:    d("served_total", "Requests the target served (200)."),
		shed:      d("shed_total", "Requests the target shed at once for want of room (503)."),
		expired:   d("expired_total", "Requests that waited out the target's queue timeout unserved (503)."),
		collapsed: d("collapsed_total", "Requests the collapse model failed (500)."),
		down:      d("down_total", "Requests that arrived while the target was down."),
		canceled:  d("canceled_total", "Requests their client abandoned before an answer."),
		zombies:   d("zombies_total", "Abandoned requests the backlog model served anyway, after their client had left."),
		inFlight:  d("in_flight", "Requests the target is handling now."),
		queued:    d("queued", "Requests waiting in the target's queue now."),
	})
}

// targetCollector exports a built-in target's counters.
type targetCollector struct {
	t                                                TargetSource
	capacity, served, shed, expired, collapsed, down *prometheus.Desc
	canceled, zombies, inFlight, queued              *prometheus.Desc
}

func (c *targetCollector) descs() []*prometheus.Desc {
	return []*prometheus.Desc{c.capacity, c.served, c.shed, c.expired, c.collapsed, c.down, c.canceled, c.zombies, c.inFlight, c.queued}
}

// Describe sends the target's descriptors.
func (c *targetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
}

// Collect reads the target's Stats once.
func (c *targetCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.t.Stats()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge(c.capacity, s.Capacity)
	counter(c.served, s.OK)
	counter(c.shed, s.Shed)
	counter(c.expired, s.Expired)
	counter(c.collapsed, s.Collapsed)
	counter(c.down, s.Down)
	counter(c.canceled, s.Canceled)
	counter(c.zombies, s.Zombies)
	gauge(c.inFlight, float64(s.InFlight))
	gauge(c.queued, float64(s.Queued))
}
