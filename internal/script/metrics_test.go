package script

import (
	"strings"
	"testing"
	"time"
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
