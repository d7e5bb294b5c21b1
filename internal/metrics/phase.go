package metrics

import (
	"errors"
	"maps"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
)

// LatencySource is the latency a host already records, read as a cumulative
// histogram at scrape time. report.Recorder implements it (Cumulative).
type LatencySource interface {
	// Cumulative sets counts[i] to how many latencies were at most
	// bounds[i] and returns how many there were in all and their sum.
	// Counts never fall between calls.
	Cumulative(bounds []time.Duration, counts []uint64) (total uint64, sum time.Duration)
}

// LatencyBounds are the upper bounds of throttle_attempt_duration_seconds'
// buckets, ascending: 1, 1.5, 2, 3, 5 and 7 per decade from 100 µs to 7 s,
// then 10, 15, 20, 30 and 60 s (35 buckets), fine enough for
// histogram_quantile to give p50/p99 within a bucket's width. They cost
// nothing on the hot path (the recorder's HDR histograms hold every latency
// at 0.1 %); they cost only series.
var LatencyBounds = latencyBounds()

func latencyBounds() []time.Duration {
	var b []time.Duration
	for decade := 100 * time.Microsecond; decade <= time.Second; decade *= 10 {
		for _, m := range []float64{1, 1.5, 2, 3, 5, 7} {
			b = append(b, time.Duration(m*float64(decade)))
		}
	}
	for _, s := range []time.Duration{10, 15, 20, 30, 60} {
		b = append(b, s*time.Second)
	}
	return b
}

// Phase exports one governed phase. Make it with NewPhase, then Register it
// with its Source once the phase's host exists. Every series it exports is
// read at scrape time, except that without Source.Windows the decisions by
// signal and the newest window's failure fraction are what Observe recorded,
// once per closed window: a host that keeps no list of its windows while it
// runs (the engine) chains Observe into its observer, so the Phase is made
// before the host.
type Phase struct {
	name    string
	latency LatencySource // nil: no latency histogram

	src Source // set by Register

	mu        sync.Mutex
	decisions map[governor.Signal]uint64
	lastFrac  float64 // NaN before the first closed window

	d descs
}

// NewPhase returns the exporter of a phase called name (the phase label).
// latency, if not nil, backs the latency histogram.
func NewPhase(name string, latency LatencySource) *Phase {
	p := &Phase{name: name, latency: latency, lastFrac: math.NaN()}
	p.decisions = p.zeroDecisions()
	p.d = newDescs(prometheus.Labels{"phase": name})
	return p
}

// Signals are the signals a closed window can carry, in the governor's
// order: every governor.Signal from the first after SignalNone (an
// undecided window is never closed) up to the first that has no name of its
// own, that is whose name is the one out-of-range values get or spells its
// number ("signal(12)"). They come from the governor itself so that a signal
// it adds is exported without a change here.
func Signals() []governor.Signal {
	unknown := (^governor.Signal(0)).String()
	var out []governor.Signal
	for s := governor.Signal(1); s != 0; s++ {
		name := s.String()
		if name == unknown || strings.Contains(name, strconv.Itoa(int(s))) {
			break
		}
		out = append(out, s)
	}
	return out
}

// decided returns the closed windows' count by signal and the newest one's
// failure fraction (NaN before one), from Source.Windows when set, else from
// what Observe recorded.
func (p *Phase) decided() (map[governor.Signal]uint64, float64) {
	if p.src.Windows != nil {
		ws := p.src.Windows()
		counts := p.zeroDecisions()
		frac := math.NaN()
		for _, w := range ws {
			counts[w.Decision.Signal]++
			frac = w.Frac
		}
		return counts, frac
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.decisions), p.lastFrac
}

// zeroDecisions is a count of 0 for every signal, so that each is a series
// from the start and rate() sees its first window.
func (p *Phase) zeroDecisions() map[governor.Signal]uint64 {
	m := map[governor.Signal]uint64{}
	for _, s := range Signals() {
		m[s] = 0
	}
	return m
}

// Observe records a closed window. Chain it into the engine's observer: it
// runs on the governor's loop and takes a lock and a map update. With
// Source.Windows set it is not needed (and not read).
func (p *Phase) Observe(w governor.Window) {
	p.mu.Lock()
	p.decisions[w.Decision.Signal]++
	p.lastFrac = w.Frac
	p.mu.Unlock()
}

// Source is what a phase's exporter reads at every scrape.
type Source struct {
	// Limits are the phase's limits, defaults filled in (engine.Config's).
	Limits governor.Limits
	// Snapshot is the phase's live view: engine.Engine.Snapshot, or a
	// script phase's, in the engine's terms. Required.
	Snapshot func() engine.Snapshot
	// Windows, if set, returns the phase's closed windows so far, in order
	// (a script phase's Windows): the decisions by signal and the newest
	// window's fraction are then read from it instead of from Observe.
	Windows func() []governor.Window
}

// Register starts exporting p from src. A phase is registered once; two
// phases need two names.
func (r *Registry) Register(p *Phase, src Source) error {
	if src.Snapshot == nil {
		return errors.New("metrics: a phase needs its snapshot")
	}
	if p.src.Snapshot != nil {
		return errors.New("metrics: phase " + p.name + " is already registered")
	}
	p.src = src
	return r.reg.Register(p)
}

// descs are a phase's descriptors, its phase label constant.
type descs struct {
	offer, ceiling, floor, high, low, lastBad, streak, frac            *prometheus.Desc
	windows, decisions, attempts, aborted, iterations, dropped, missed *prometheus.Desc
	inFlight, workers, latency                                         *prometheus.Desc
}

func newDescs(phase prometheus.Labels) descs {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("throttle_"+name, help, labels, phase)
	}
	return descs{
		offer:      d("offer", "The governor's committed offer: iterations/s (rate mode) or in flight (concurrency mode); 0 before the phase starts."),
		ceiling:    d("ceiling", "The phase's ceiling: the offer never goes above it."),
		floor:      d("floor", "The phase's floor: the offer never goes below it."),
		high:       d("high", "The failure bound: a window whose attempt-failure fraction is above it backs off."),
		low:        d("low", "The clean threshold: a window at or below it may climb."),
		lastBad:    d("last_bad", "The congestion memory: the offer of the last breach; NaN while unexplored."),
		streak:     d("memory_streak", "Clean windows at or above last_bad in a row (three clear the memory)."),
		frac:       d("window_failure_fraction", "The newest closed window's attempt-failure fraction; NaN before the first window closes."),
		windows:    d("windows_total", "Governor windows closed."),
		decisions:  d("decisions_total", "Closed windows by the rule that decided them.", "signal"),
		attempts:   d("attempts_total", "Resolved attempts, retries included, by result and outcome class.", "result", "class"),
		aborted:    d("aborted_attempts_total", "Attempts cut off by the engine's own stop: neither ok nor failed."),
		iterations: d("iterations_total", "Iterations by their final outcome after tries.", "result"),
		dropped:    d("dropped_arrivals_total", "Rate-mode arrivals that found no free worker."),
		missed:     d("missed_arrivals_total", "Rate-mode arrivals the schedule asked for that the generator fell too far behind to make."),
		inFlight:   d("in_flight", "Iterations in flight."),
		workers:    d("workers", "Workers running."),
		latency:    d("attempt_duration_seconds", "Latency of resolved attempts, measured from their intended start (no coordinated omission)."),
	}
}

// Describe sends every descriptor of the phase.
func (p *Phase) Describe(ch chan<- *prometheus.Desc) {
	d := &p.d
	for _, x := range []*prometheus.Desc{d.offer, d.ceiling, d.floor, d.high, d.low, d.lastBad, d.streak, d.frac,
		d.windows, d.decisions, d.attempts, d.aborted, d.iterations, d.dropped, d.missed, d.inFlight, d.workers} {
		ch <- x
	}
	if p.latency != nil {
		ch <- d.latency
	}
}

// Collect reads the phase once: one engine snapshot (which holds the
// governor's state), the decisions tallied so far and the latency histogram.
func (p *Phase) Collect(ch chan<- prometheus.Metric) {
	s := p.src.Snapshot()
	d := &p.d
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	counter := func(desc *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
	}
	g := s.Governor
	gauge(d.offer, g.Offer)
	l := p.src.Limits
	gauge(d.ceiling, l.Ceiling)
	gauge(d.floor, l.Floor)
	gauge(d.high, l.High)
	gauge(d.low, l.Low)
	lastBad := g.LastBad
	if lastBad == 0 {
		lastBad = math.NaN()
	}
	gauge(d.lastBad, lastBad)
	gauge(d.streak, float64(g.Streak))
	counter(d.windows, uint64(g.Windows))

	decisions, frac := p.decided()
	for sig, n := range decisions {
		counter(d.decisions, n, sig.String())
	}
	gauge(d.frac, frac)

	c := s.Counts
	for i, n := range c.Classes {
		class := engine.Class(i)
		result := "failed"
		if class == engine.ClassOK {
			result = "ok"
		}
		counter(d.attempts, n, result, class.String())
	}
	counter(d.aborted, c.Aborted)
	counter(d.iterations, c.IterOK, "ok")
	counter(d.iterations, c.IterFailed, "failed")
	counter(d.dropped, c.Dropped)
	counter(d.missed, c.Missed)
	gauge(d.inFlight, float64(s.InFlight))
	gauge(d.workers, float64(s.Workers))

	if p.latency != nil {
		counts := make([]uint64, len(LatencyBounds))
		total, sum := p.latency.Cumulative(LatencyBounds, counts)
		buckets := make(map[float64]uint64, len(counts))
		for i, b := range LatencyBounds {
			buckets[b.Seconds()] = counts[i]
		}
		ch <- prometheus.MustNewConstHistogram(d.latency, total, sum.Seconds(), buckets)
	}
}
