package metrics_test

import (
	"math"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/throttlekit/throttle/internal/metrics"
)

// fakeScript is what a script runner does with k6/metrics: every VU runs
// the init code, which declares the metrics, then adds samples while its
// scenario (phase) runs.
type fakeScript struct {
	decls []struct {
		name string
		kind metrics.Kind
	}
}

func (s *fakeScript) declare(name string, kind metrics.Kind) {
	s.decls = append(s.decls, struct {
		name string
		kind metrics.Kind
	}{name, kind})
}

// initVU runs the script's init code for one VU against the hook.
func (s *fakeScript) initVU(t *testing.T, reg *metrics.Registry) map[string]*metrics.Custom {
	t.Helper()
	m := map[string]*metrics.Custom{}
	for _, d := range s.decls {
		c, err := reg.Custom(d.name, d.kind)
		if err != nil {
			t.Fatalf("declare %s %v: %v", d.name, d.kind, err)
		}
		m[d.name] = c
	}
	return m
}

func TestCustomMetricsAsDeclared(t *testing.T) {
	var script fakeScript
	script.declare("checkout_errors", metrics.Counter)
	script.declare("queue_depth", metrics.Gauge)
	script.declare("cache_hit", metrics.Rate)
	script.declare("checkout_ms", metrics.Trend)

	reg := metrics.New()
	const vus = 4
	var wg sync.WaitGroup
	vu := make([]map[string]*metrics.Custom, vus)
	for i := range vus {
		vu[i] = script.initVU(t, reg) // the same declarations once per VU
	}
	for i := range vus {
		wg.Go(func() {
			m := vu[i]
			for j := range 25 {
				must(t, m["checkout_errors"].Add("checkout", 2))
				must(t, m["cache_hit"].Add("checkout", float64(j%5))) // 1 in 5 zero
				must(t, m["checkout_ms"].Add("checkout", 10))
			}
		})
	}
	wg.Wait()
	must(t, vu[0]["queue_depth"].Add("checkout", 3))
	must(t, vu[1]["queue_depth"].Add("checkout", 7)) // the last value wins
	must(t, vu[0]["checkout_errors"].Add("browse", 1))

	f := gather(t, reg)
	types := map[string]dto.MetricType{
		"checkout_errors": dto.MetricType_COUNTER,
		"queue_depth":     dto.MetricType_GAUGE,
		"cache_hit":       dto.MetricType_COUNTER,
		"checkout_ms":     dto.MetricType_HISTOGRAM,
	}
	for name, want := range types {
		if fam := f[name]; fam == nil || fam.GetType() != want {
			t.Errorf("%s: family %v, want a %v", name, fam, want)
		}
	}
	checkout := map[string]string{"phase": "checkout"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"checkout_errors", checkout, 2 * 25 * vus},
		{"checkout_errors", map[string]string{"phase": "browse"}, 1},
		{"queue_depth", checkout, 7},
		{"cache_hit", map[string]string{"phase": "checkout", "outcome": "nonzero"}, 20 * vus},
		{"cache_hit", map[string]string{"phase": "checkout", "outcome": "zero"}, 5 * vus},
		{"checkout_ms", checkout, 25 * vus},
	} {
		if got := value(t, f, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := f.Series("checkout_ms", checkout)[0].GetHistogram()
	if h.GetSampleSum() != 10*25*vus {
		t.Errorf("trend sum %v, want %v", h.GetSampleSum(), 10*25*vus)
	}
	for _, b := range h.GetBucket() {
		if want := map[bool]uint64{true: 25 * vus, false: 0}[b.GetUpperBound() >= 10]; b.GetCumulativeCount() != want {
			t.Errorf("trend bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

func TestCustomRefusals(t *testing.T) {
	reg := metrics.New()
	if _, err := reg.Custom("x", metrics.Trend); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Custom("n", metrics.Counter); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		kind metrics.Kind
		want string
	}{
		{"x", metrics.Counter, "already a Trend"},
		{"x_sum", metrics.Gauge, `which custom metric "x" exports`},
		{"1abc", metrics.Counter, "Prometheus name"},
		{"http.req", metrics.Counter, "Prometheus name"},
		{"", metrics.Counter, "Prometheus name"},
		{"throttle_offer", metrics.Gauge, "throttle's own"},
		{"y", metrics.Kind(9), "unknown kind"},
	} {
		if _, err := reg.Custom(c.name, c.kind); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Custom(%q, %v): %v, want an error saying %q", c.name, c.kind, err, c.want)
		}
	}
	// A Trend cannot take names a declared metric already exports either.
	if _, err := reg.Custom("n_count", metrics.Gauge); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Custom("n", metrics.Trend); err == nil {
		t.Error("a Trend n over a Counter n was accepted")
	}

	n, _ := reg.Custom("n", metrics.Counter)
	for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := n.Add("main", v); err == nil {
			t.Errorf("Counter.Add(%v) accepted", v)
		}
	}
	if s := gather(t, reg).Series("n", nil); len(s) != 0 {
		t.Errorf("refused samples were recorded: %v", s)
	}
}

// With --metrics off the runner gets a nil registry: declaring and adding
// cost nothing and fail nothing.
func TestCustomWithoutRegistry(t *testing.T) {
	var reg *metrics.Registry
	c, err := reg.Custom("anything", metrics.Counter)
	if err != nil || c != nil {
		t.Fatalf("nil registry: %v, %v", c, err)
	}
	if err := c.Add("main", 1); err != nil {
		t.Error(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}
