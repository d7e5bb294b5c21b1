package script

import (
	"testing"
	"time"
)

// TestScenarioSummaries: summaryMode full keeps each metric per scenario
// (setup's values in none); other modes keep nothing extra.
func TestScenarioSummaries(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "sc.js", `
import http from 'k6/http';
import { Counter } from 'k6/metrics';
const hits = new Counter('hits');
export const options = { scenarios: {
  a: { executor: 'shared-iterations', vus: 1, iterations: 3, exec: 'a' },
  b: { executor: 'per-vu-iterations', vus: 2, iterations: 2, exec: 'b' },
} };
export function setup() { http.get(__ENV.BASE + '/'); }
export function a() { http.get(__ENV.BASE + '/'); hits.add(1); }
export function b() { http.get(__ENV.BASE + '/'); http.get(__ENV.BASE + '/'); }
`)
	for _, mode := range []string{"full", "compact"} {
		cfg := fast()
		cfg.Fixed = true
		m := mode
		cfg.CLIOptions.SummaryMode = &m
		r, res := runScript(t, path, base, cfg, 30*time.Second)
		s := r.Summary(res.End.Sub(res.Start))
		if mode != "full" {
			if len(s.Scenarios) != 0 {
				t.Errorf("%s: %d scenario sections, want none", mode, len(s.Scenarios))
			}
			continue
		}
		got := map[string]map[string]float64{}
		for _, sc := range s.Scenarios {
			got[sc.Name] = map[string]float64{}
			for _, m := range sc.Metrics {
				got[sc.Name][m.Name] = float64(m.Count)
			}
		}
		want := map[string]map[string]float64{"a": {"iterations": 3, "http_reqs": 3, "hits": 1 + 1 + 1}, "b": {"iterations": 4, "http_reqs": 8}}
		for sc, ms := range want {
			for name, n := range ms {
				if got[sc][name] != n {
					t.Errorf("scenario %s: %s counted %v values, want %v (all: %v)", sc, name, got[sc][name], n, got)
				}
			}
		}
		if _, ok := got["b"]["hits"]; ok || len(got) != 2 {
			t.Errorf("scenarios %v: want a and b only, hits in a only", got)
		}
	}
}
