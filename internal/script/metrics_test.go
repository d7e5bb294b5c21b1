package script

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestCustomMetrics(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "m.js", `
import http from 'k6/http';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
const hits = new Counter('hits');
const last = new Gauge('last_iter');
const ok = new Rate('ok_rate');
const wait = new Trend('wait_ms', true);
export const options = { scenarios: { s: { executor: 'shared-iterations', vus: 2, iterations: 10 } } };
export default function () {
  const r = http.get(__ENV.BASE + '/');
  hits.add(2, { kind: 'x' });
  last.add(__ITER);
  ok.add(__ITER % 2 === 0);
  wait.add(r.timings.duration >= 0 ? 10 : -1);
}
`)
	r, _ := runScript(t, path, base, Config{}, 30*time.Second)
	got := map[string]MetricStats{}
	for _, m := range r.Metrics() {
		got[m.Name] = m.Stats()
	}
	if s := got["hits"]; s.Type != Counter || s.Count != 10 || s.Sum != 20 {
		t.Errorf("hits %+v", s)
	}
	if s := got["ok_rate"]; s.Type != Rate || s.Count != 10 || s.NonZero == 0 || s.NonZero == 10 {
		t.Errorf("ok_rate %+v: want some but not all true", s)
	}
	if s := got["wait_ms"]; s.Type != Trend || !s.IsTime || s.Count != 10 || s.Avg != 10 || s.Med != 10 || s.P95 != 10 {
		t.Errorf("wait_ms %+v", s)
	}
	if s := got["last_iter"]; s.Type != Gauge || s.Count != 10 || s.Max < 4 {
		t.Errorf("last_iter %+v", s)
	}
	for _, bad := range []string{
		"import { Counter } from 'k6/metrics';\nconst a = new Counter('a b');\nexport default function () {}\n",
		"import { Counter, Trend } from 'k6/metrics';\nconst a = new Counter('a');\nconst b = new Trend('a');\nexport default function () {}\n",
	} {
		if _, err := Load(writeScript(t, "bad.js", bad), Config{}); err == nil || !strings.Contains(err.Error(), "metric") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestThresholdTagFilters: a threshold on metric{tag:value} reads a
// sub-metric holding only the matching values: system tags (name, status,
// method, expected_response, scenario, check) and the script's own.
func TestThresholdTagFilters(t *testing.T) {
	base, _ := echo(t)
	path := writeScript(t, "tf.js", `
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const orders = new Counter('orders');
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: 3, tags: { team: 'blue' } } },
  thresholds: {
    'http_reqs{name:a}': ['count==3'],
    'http_reqs{status:404}': ['count==3'],
    'http_reqs{team:blue,method:POST}': ['count==3'],
    'http_req_failed{expected_response:false}': ['rate==1'],
    'checks{check:is ok}': ['rate==1'],
    'checks{check:never}': ['rate==0'],
    'orders{kind:x}': ['count==6'],
    'http_reqs{scenario:other}': ['count==0'],
  },
};
export default function () {
  check(http.get(__ENV.BASE + '/a', { tags: { name: 'a' } }), { 'is ok': (r) => r.status === 200 });
  http.post(__ENV.BASE + '/status/404', 'x');
  check(1, { never: () => false });
  orders.add(2, { kind: 'x' });
  orders.add(5, { kind: 'y' });
}
`)
	r, _ := runScript(t, path, base, Config{}, 30*time.Second)
	for _, th := range r.Thresholds() {
		if !th.OK {
			t.Errorf("%s %s: value %v", th.Metric, th.Source, th.Value)
		}
	}
	if len(r.Thresholds()) != 8 {
		t.Fatalf("%d thresholds", len(r.Thresholds()))
	}
}

// A trend's zero values, held back from its histogram (Metric.zeros),
// count in its percentiles past the exact values as every other value.
func TestTrendZerosInPercentiles(t *testing.T) {
	m := newMetric("t", Trend, true)
	for i := range exactValues + 5001 {
		v := 0.0
		if i%3 == 2 {
			v = 10
		}
		if err := m.add("", v); err != nil {
			t.Fatal(err)
		}
	}
	s := m.Stats()
	if s.Count != exactValues+5001 || s.Med != 0 || s.P90 != 10 || s.P95 != 10 {
		t.Fatalf("count %d, med %v, p90 %v, p95 %v; want %d, 0, 10, 10", s.Count, s.Med, s.P90, s.P95, exactValues+5001)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.histogram().TotalCount(); n != exactValues+5001 {
		t.Fatalf("%d values in the histogram", n)
	}
	if q := m.quantile(60); q != 0 {
		t.Fatalf("p(60) = %v, want 0", q)
	}
	if q := m.quantile(70); q != 10 {
		t.Fatalf("p(70) = %v, want 10", q)
	}
}

// TestHistValueIsRound: a Trend's histogram value is
// int64(math.Round(math.Max(v, 0) * trendScale)) for every v: halves
// (rounded away from zero), the float just under a half, negatives, -0,
// infinities, NaN, values near 2^52 scaled, and random ones.
func TestHistValueIsRound(t *testing.T) {
	ref := func(v float64) int64 { return int64(math.Round(math.Max(v, 0) * trendScale)) }
	vs := []float64{0, math.Copysign(0, -1), -1, -0.0004, 0.0004, 0.0005, 0.0015, 0.0025, 2.5, 1e-300, -1e-300,
		math.Nextafter(0.5, 0) / trendScale, 0.5 / trendScale, 1.5 / trendScale, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxFloat64, -math.MaxFloat64, 3_600_000, 3_600_000.0005, 1e15, 1e18}
	for _, x := range []float64{1 << 52, 1 << 53, 1 << 62, 1 << 63, 1 << 64} {
		for _, d := range []float64{-1.5, -1, -0.5, 0, 0.5, 1} {
			vs = append(vs, (x+d)/trendScale, math.Nextafter(x, 0)/trendScale, math.Nextafter(x, math.Inf(1))/trendScale)
		}
	}
	for i := int64(0); i < 4096; i++ { // every thousandth's half around small and large values
		vs = append(vs, (float64(i)+0.5)/trendScale, float64(i)/trendScale, float64(i*1_000_003)+0.0005)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		vs = append(vs, r.Float64()*1000, r.NormFloat64()*1e6, math.Float64frombits(r.Uint64()))
	}
	for _, v := range vs {
		if got, want := histValue(v), ref(v); got != want {
			t.Fatalf("histValue(%v) = %d; want %d", v, got, want)
		}
	}
}

// TestTrendHistogramAsRecorded: a Trend's exact values go into its
// histogram only when it is needed (Metric.histed); whenever it is read —
// before, at and past exactValues, after percentiles asked in between and
// after merges of agents' deltas — it holds what recording every value
// (histValue, zeros included) as it came would have, and each value once.
func TestTrendHistogramAsRecorded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	value := func() float64 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return -r.Float64()
		case 2:
			return float64(r.IntN(50)) + 0.0005 // a half, rounded away from zero
		default:
			return r.ExpFloat64() * 40
		}
	}
	odd := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e-300, -1e-300, 0.0005, 0.0015,
		math.Nextafter(0.5, 0) / trendScale, (1<<52 - 0.5) / trendScale, (1<<52 + 1) / trendScale, 3_600_000, 3_600_001, 1e300}
	for _, tc := range []struct {
		name   string
		checks []int // value counts at which the histogram is read
		merge  int   // every merge-th value comes from an agent's delta (0: none; -1: none, odd values)
	}{
		{"read-at-end", []int{exactValues + 3000}, 0},
		{"odd-values", []int{exactValues + 3000}, -1},
		{"read-in-between", []int{1, 2, 500, exactValues - 1, exactValues, exactValues + 1, exactValues + 700}, 0},
		{"at-the-limit", []int{exactValues}, 0},
		{"merges", []int{300, 4000, exactValues + 2000}, 997},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMetric("t", Trend, true)
			ref := hdr.New(0, 3_600_000*trendScale, 3)
			agent := newMetric("t", Trend, true)
			agent.pending = newPending(Trend)
			n := 0
			for _, c := range tc.checks {
				for ; n < c; n++ {
					v := value()
					if tc.merge < 0 && n%7 == 0 { // past exactValues too: recordLocked's own rounding
						v = odd[n/7%len(odd)]
					}
					_ = ref.RecordValue(int64(math.Round(math.Max(v, 0) * trendScale)))
					if tc.merge <= 0 || n%tc.merge != 0 {
						if err := m.add("", v); err != nil {
							t.Fatal(err)
						}
						continue
					}
					if err := agent.add("", v); err != nil {
						t.Fatal(err)
					}
					d, ok := agent.take("")
					if !ok {
						t.Fatal("no delta")
					}
					if err := m.merge(d); err != nil {
						t.Fatal(err)
					}
				}
				m.mu.Lock()
				h := m.histogram()
				got, want := h.Export().Counts, ref.Export().Counts
				if h.TotalCount() != ref.TotalCount() || (tc.merge >= 0 && h.TotalCount() != int64(n)) || !slices.Equal(got, want) {
					t.Errorf("after %d values: %d in the histogram, counts equal %v", n, h.TotalCount(), slices.Equal(got, want))
				}
				if exact := uint64(len(m.exact)) == m.count; exact != (n <= exactValues) {
					t.Errorf("after %d values: exact %v", n, exact)
				}
				m.mu.Unlock()
			}
		})
	}
}
