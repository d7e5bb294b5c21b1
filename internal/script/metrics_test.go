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
