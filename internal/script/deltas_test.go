package script

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestMergedTrendIsOneProcesss: a trend merged from three agents' deltas,
// taken at many ticks, has the figures of one metric that saw every value:
// exact while there are few values, the one histogram's beyond.
func TestMergedTrendIsOneProcesss(t *testing.T) {
	for _, n := range []int{3000, 30000} {
		one, _ := (&metrics{}).get("t", Trend, true)
		merged, _ := (&metrics{}).get("t", Trend, true)
		agents := make([]*Metric, 3)
		for i := range agents {
			agents[i], _ = (&metrics{deltas: true}).get("t", Trend, true)
		}
		rng := rand.New(rand.NewPCG(7, uint64(n)))
		take := func(a *Metric) { takeInto(t, a, merged) }
		for i := range n {
			v := rng.ExpFloat64() * float64(1+i%3) * 40
			_ = one.add("", v)
			_ = agents[i%3].add("", v)
			if i%997 == 0 {
				take(agents[i%3])
			}
		}
		for _, a := range agents {
			take(a)
		}
		o, m := one.Stats(), merged.Stats()
		if o.Count != m.Count || o.Med != m.Med || o.P90 != m.P90 || o.P95 != m.P95 || o.Min != m.Min || o.Max != m.Max || o.NonZero != m.NonZero {
			t.Errorf("%d values: merged %+v, want %+v", n, m, o)
		}
		if d := o.Sum - m.Sum; d > 1e-6*o.Sum || d < -1e-6*o.Sum {
			t.Errorf("%d values: merged sum %v, want %v", n, m.Sum, o.Sum)
		}
		if q1, q2 := one.Quantile(99), merged.Quantile(99); q1 != q2 {
			t.Errorf("%d values: merged p(99) %v, want %v", n, q2, q1)
		}
	}
}

// TestScriptDeltasMergeToTheTest: three segments of a script, each run
// with deltas taken as it goes, merged into a controller's runner, give
// the summary of the whole test: iterations, requests, checks, custom
// counters, rates and trends (their exact percentiles), and the crossed
// threshold.
func TestScriptDeltasMergeToTheTest(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "m.js", `
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Rate, Trend } from 'k6/metrics';
const c = new Counter('my_count');
const r = new Rate('my_rate');
const tr = new Trend('my_trend');
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 3, iterations: 30 } },
  thresholds: { my_rate: ['rate>0.5'], 'http_reqs{scenario:s}': ['count==30'], my_trend: ['p(50)==14.5'] },
};
export default function () {
  const i = exec();
  http.get(__ENV.BASE + '/');
  check(i, { 'even': (v) => v % 2 === 0 });
  c.add(2);
  r.add(i % 3 === 0);
  tr.add(i);
}
import e from 'k6/execution';
function exec() { return e.scenario.iterationInTest; }
`)
	whole, res := runScript(t, path, base, Config{}, 60*time.Second)
	want := whole.Summary(res.End.Sub(res.Start))

	ctl, err := Load(path, Config{Env: map[string]string{"BASE": base}})
	if err != nil {
		t.Fatal(err)
	}
	ctl.StartMerged(time.Now())
	for _, seg := range []string{"0:1/3", "1/3:2/3", "2/3:1"} {
		cfg := Config{Deltas: true}
		_ = cfg.CLIOptions.Set("execution-segment", seg)
		r, _ := runScript(t, path, base, cfg, 60*time.Second)
		if err := ctl.Merge(seg, r.TakeDeltas()); err != nil {
			t.Fatal(err)
		}
		if d := r.TakeDeltas(); len(d.Metrics) != 0 || len(d.Checks) != 0 {
			t.Errorf("%s: a second take has %+v, want nothing new", seg, d)
		}
	}
	got, err := ctl.FinishMerged(&RunResult{Start: time.Now()})
	if err != nil || got.Interrupted {
		t.Fatalf("finish: %+v %v", got, err)
	}
	sum := ctl.Summary(time.Second)
	byName := func(s *Summary) map[string]SummaryMetric {
		m := map[string]SummaryMetric{}
		for _, x := range s.Metrics {
			m[x.Name] = x
		}
		return m
	}
	w, g := byName(want), byName(sum)
	for _, name := range []string{"iterations", "http_reqs", "my_count", "my_rate", "checks", "my_trend", "http_reqs{scenario:s}"} {
		ws, gs := w[name].MetricStats, g[name].MetricStats
		if ws.Count != gs.Count || ws.NonZero != gs.NonZero || ws.Sum != gs.Sum || ws.Med != gs.Med || ws.P90 != gs.P90 || ws.Max != gs.Max {
			t.Errorf("%s: merged %+v, want %+v", name, gs, ws)
		}
	}
	if g["vus_max"].Last != w["vus_max"].Last || g["vus_max"].Max != 3 {
		t.Errorf("vus_max: merged %+v, want the sum of the agents' (%+v)", g["vus_max"].MetricStats, w["vus_max"].MetricStats)
	}
	if len(sum.Root.Checks) != 1 || sum.Root.Checks[0].Passes != 15 || sum.Root.Checks[0].Fails != 15 {
		t.Errorf("checks %+v: want 'even' 15 passes, 15 fails", sum.Root.Checks)
	}
	ths, wths := ctl.Thresholds(), whole.Thresholds()
	if len(ths) != 3 || len(wths) != 3 {
		t.Fatalf("thresholds %+v, want three", ths)
	}
	for i, th := range ths {
		if th.OK != wths[i].OK || th.Value != wths[i].Value || th.OK != (th.Metric != "my_rate") {
			t.Errorf("threshold %s on %s: merged %v (%v), whole test %v (%v); want only my_rate's crossed", th.Source, th.Metric, th.OK, th.Value, wths[i].OK, wths[i].Value)
		}
	}
}

// TestDeltasRunLeavesHandleSummary: an agent's run (Deltas) does not call
// handleSummary; its controller does, with the whole test's data.
func TestDeltasRunLeavesHandleSummary(t *testing.T) {
	path := writeScript(t, "h.js", `
export default function () {}
export function handleSummary() { return { stdout: 'called' }; }
`)
	_, res := runScript(t, path, "", Config{Deltas: true}, 30*time.Second)
	if res.HandleSummary || len(res.Outputs) != 0 {
		t.Fatalf("result %+v: handleSummary ran on an agent", res)
	}
}
