package script

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script/options"
)

// summaryScript makes 2×6 iterations, each one request, checks at the top
// and in nested groups (one always failing, one failing every third
// iteration), a Trend of known values and a threshold that holds and one
// that is crossed.
const summaryScript = `
import http from 'k6/http';
import { check, group } from 'k6';
import { Trend } from 'k6/metrics';
const size = new Trend('size');
export const options = {
  scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 6 } },
  thresholds: { http_reqs: ['count==12'], size: ['max<3'], 'http_req_duration{expected_response:true}': ['count==12'] },
  summaryTrendStats: ['min', 'max', 'p(50)', 'p(99)', 'count'],
};
export default function () {
  const r = http.get(__ENV.BASE + '/');
  check(r, { 'status is 200': (r) => r.status === 200 });
  group('outer', () => {
    check(null, { 'never': () => false });
    group('inner', () => { check(null, { 'two in three': () => __ITER % 3 !== 0 }); });
  });
  size.add(__ITER);
}
`

func TestSummaryExport(t *testing.T) {
	_, base := startTarget(t, robust())
	r, res := runScript(t, writeScript(t, "s.js", summaryScript), base, Config{}, 30*time.Second)
	s := r.Summary(res.End.Sub(res.Start))
	b, err := s.ExportJSON()
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		Name, Path, ID string
		Passes, Fails  uint64
	}
	type group struct {
		Name, Path, ID string
		Groups         map[string]json.RawMessage
		Checks         map[string]check
	}
	var doc struct {
		RootGroup group                                 `json:"root_group"`
		Metrics   map[string]map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.RootGroup
	if root.Name != "" || root.Path != "" || root.ID != "d41d8cd98f00b204e9800998ecf8427e" || len(root.Groups) != 1 {
		t.Fatalf("root_group %+v", root)
	}
	if c := root.Checks["status is 200"]; c.Passes != 12 || c.Fails != 0 || c.Path != "::status is 200" || c.ID != pathID("::status is 200") {
		t.Errorf("status check %+v", c)
	}
	var outer, inner group
	if err := json.Unmarshal(root.Groups["outer"], &outer); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(outer.Groups["inner"], &inner); err != nil {
		t.Fatal(err)
	}
	if outer.Path != "::outer" || inner.Path != "::outer::inner" || inner.Name != "inner" {
		t.Errorf("groups %+v / %+v", outer, inner)
	}
	if c := outer.Checks["never"]; c.Passes != 0 || c.Fails != 12 {
		t.Errorf("never %+v", c)
	}
	// __ITER 0..5 per VU: 0 and 3 fail.
	if c := inner.Checks["two in three"]; c.Passes != 8 || c.Fails != 4 || c.Path != "::outer::inner::two in three" {
		t.Errorf("two in three %+v", c)
	}
	num := func(metric, stat string) float64 {
		t.Helper()
		var v float64
		if err := json.Unmarshal(doc.Metrics[metric][stat], &v); err != nil {
			t.Fatalf("%s.%s: %s: %v", metric, stat, doc.Metrics[metric][stat], err)
		}
		return v
	}
	if num("http_reqs", "count") != 12 || num("http_reqs", "rate") <= 0 || num("iterations", "count") != 12 {
		t.Errorf("counters %v", doc.Metrics)
	}
	// checks: 12 + 12 + 12 values, 20 passing.
	if num("checks", "passes") != 20 || num("checks", "fails") != 16 || num("checks", "value") != 20.0/36 {
		t.Errorf("checks %v", doc.Metrics["checks"])
	}
	if num("http_req_failed", "passes") != 0 || num("http_req_failed", "fails") != 12 || num("http_req_failed", "value") != 0 {
		t.Errorf("http_req_failed %v", doc.Metrics["http_req_failed"])
	}
	if num("size", "min") != 0 || num("size", "max") != 5 || num("size", "count") != 12 || num("size", "p(50)") != r.metric("size").Quantile(50) {
		t.Errorf("size %v", doc.Metrics["size"])
	}
	d := r.metric("http_req_duration")
	if num("http_req_duration", "p(99)") != d.Quantile(99) || num("http_req_duration", "max") != d.Stats().Max {
		t.Errorf("http_req_duration %v: want the run's histogram's p(99) %v", doc.Metrics["http_req_duration"], d.Quantile(99))
	}
	for _, part := range []string{"http_req_blocked", "http_req_connecting", "http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving"} {
		if num(part, "count") != 12 {
			t.Errorf("%s %v: want 12 values", part, doc.Metrics[part])
		}
	}
	// sending, waiting and receiving make up a request's duration
	if num("http_req_waiting", "max") > num("http_req_duration", "max") || num("http_req_sending", "min") > num("http_req_duration", "min") {
		t.Errorf("waiting %v sending %v beyond duration %v", doc.Metrics["http_req_waiting"], doc.Metrics["http_req_sending"], doc.Metrics["http_req_duration"])
	}
	// outer and inner run once per iteration each
	if num("group_duration", "count") != 24 {
		t.Errorf("group_duration %v: want 24 values", doc.Metrics["group_duration"])
	}
	// every request succeeded: the expected_response sub-metric is the whole
	exp := "http_req_duration{expected_response:true}"
	if num(exp, "count") != 12 || num(exp, "max") != num("http_req_duration", "max") || num(exp, "p(99)") != num("http_req_duration", "p(99)") {
		t.Errorf("%s %v", exp, doc.Metrics[exp])
	}
	var expTh map[string]bool
	if _ = json.Unmarshal(doc.Metrics[exp]["thresholds"], &expTh); len(expTh) != 1 || expTh["count==12"] {
		t.Errorf("%s thresholds %v: want count==12 held", exp, expTh)
	}
	if _, ok := doc.Metrics["http_req_duration"]["avg"]; ok {
		t.Errorf("avg shown though summaryTrendStats leaves it out")
	}
	var th map[string]bool
	_ = json.Unmarshal(doc.Metrics["http_reqs"]["thresholds"], &th)
	if len(th) != 1 || th["count==12"] {
		t.Errorf("http_reqs thresholds %v: want count==12 not crossed (false)", th)
	}
	_ = json.Unmarshal(doc.Metrics["size"]["thresholds"], &th)
	if !th["max<3"] {
		t.Errorf("size thresholds %v: want max<3 crossed (true)", th)
	}
}

func TestHandleSummary(t *testing.T) {
	_, base := startTarget(t, robust())
	dir := t.TempDir()
	out := filepath.Join(dir, "summary.json")
	src := strings.Replace(summaryScript, "export default", `
export function handleSummary(data) {
  const g = data.root_group.groups[0];
  const m = data.metrics;
  return {
    stdout: 'reqs=' + m.http_reqs.values.count + ' type=' + m.http_req_duration.type + ' contains=' + m.http_req_duration.contains +
      ' data=' + m.data_received.contains + ' ok=' + m.http_reqs.thresholds['count==12'].ok + '/' + m.size.thresholds['max<3'].ok +
      ' checks=' + m.checks.values.passes + '/' + m.checks.values.fails + ' ' + g.name + '>' + g.groups[0].checks[0].name + '=' + g.groups[0].checks[0].fails +
      ' stats=' + data.options.summaryTrendStats.join(',') + ' ms=' + (data.state.testRunDurationMs > 0) + '\n',
    [__ENV.OUT]: JSON.stringify(data),
  };
}
export default`, 1)
	r, res := runScript(t, writeScript(t, "s.js", src), base, Config{Env: map[string]string{"OUT": out}}, 30*time.Second)
	if !res.HandleSummary || len(res.Outputs) != 2 {
		t.Fatalf("outputs %+v", res.Outputs)
	}
	var stdout, file string
	for _, o := range res.Outputs {
		switch o.Name {
		case "stdout":
			stdout = string(o.Data)
		case out:
			file = string(o.Data)
		}
	}
	want := "reqs=12 type=trend contains=time data=data ok=true/false checks=20/16 outer>two in three=4 stats=min,max,p(50),p(99),count ms=true\n"
	if stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	var data struct {
		Metrics map[string]struct {
			Type   string
			Values map[string]float64
		}
	}
	if err := json.Unmarshal([]byte(file), &data); err != nil {
		t.Fatalf("%v: %s", err, file)
	}
	if v := data.Metrics["http_req_duration"].Values["p(99)"]; v != r.metric("http_req_duration").Quantile(99) {
		t.Errorf("p(99) %v", v)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the runner wrote %s itself; writing is the caller's", out)
	}
}

func TestSummaryOptionsBad(t *testing.T) {
	for _, opt := range []string{`summaryTrendStats: ['p(101)']`, `summaryTrendStats: ['mean']`, `summaryTimeUnit: 'h'`, `summaryTrendStats: 'avg'`} {
		_, err := Load(writeScript(t, "s.js", "export const options = { "+opt+" };\nexport default function () {}\n"), Config{})
		if err == nil || !strings.Contains(err.Error(), "summary") {
			t.Errorf("%s: error %v", opt, err)
		}
	}
	var cli options.Flags
	if err := cli.Set("summary-trend-stats", "p(99.9),avg"); err != nil {
		t.Fatal(err)
	}
	r, err := Load(writeScript(t, "s.js", "export const options = { summaryTrendStats: ['min'] };\nexport default function () {}\n"), Config{CLIOptions: cli})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Summary(time.Second).TrendStats; !slices.Equal(got, []string{"p(99.9)", "avg"}) {
		t.Errorf("--summary-trend-stats over the script's: got %v", got)
	}
}

// TestVUsAndDroppedMetrics: vus and vus_max are sampled while the
// scenarios run; an arrival-rate scenario whose one VU is always busy
// counts its lost arrivals in dropped_iterations, as the phase does.
func TestVUsAndDroppedMetrics(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "d.js", `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 200, timeUnit: '1s', duration: '600ms', preAllocatedVUs: 1, maxVUs: 1 } } };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.1); }
`)
	r, err := Load(path, Config{Env: map[string]string{"BASE": base}, Fixed: true})
	if err != nil {
		t.Fatal(err)
	}
	r.vuSample = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	dropped := r.metric("dropped_iterations").Stats()
	if want := r.Phases()[0].Counts().Dropped; dropped.Sum == 0 || dropped.Sum != float64(want) {
		t.Errorf("dropped_iterations %v, the phase dropped %d: want the same, > 0", dropped.Sum, want)
	}
	vus, vusMax := r.metric("vus").Stats(), r.metric("vus_max").Stats()
	if vus.Count == 0 || vus.Max != 1 || vusMax.Max != 1 {
		t.Errorf("vus %+v vus_max %+v: want samples, at most the one VU made", vus, vusMax)
	}
}

// TestPointsCarryGroupPath: every value reaches Config.Points with its
// tags, a nested group as its full path.
func TestPointsCarryGroupPath(t *testing.T) {
	_, base := startTarget(t, robust())
	var mu sync.Mutex
	groups := map[string]int{}
	cfg := Config{Points: func(m *Metric, v float64, tags map[string]string) {
		if m.Name == "checks" {
			mu.Lock()
			groups[tags["group"]+"/"+tags["check"]]++
			mu.Unlock()
		}
	}}
	runScript(t, writeScript(t, "s.js", summaryScript), base, cfg, 30*time.Second)
	want := map[string]int{"/status is 200": 12, "::outer/never": 12, "::outer::inner/two in three": 12}
	if len(groups) != len(want) {
		t.Fatalf("check points by group %v, want %v", groups, want)
	}
	for k, n := range want {
		if groups[k] != n {
			t.Errorf("check points by group %v, want %v", groups, want)
		}
	}
}

// TestExpectedResponseSubMetric: http_req_duration{expected_response:true}
// holds the durations of the requests that did not fail, and only those.
func TestExpectedResponseSubMetric(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	path := writeScript(t, "e.js", `
import http from 'k6/http';
export const options = { iterations: 4 };
export default function () { http.get(__ENV.BASE + '/'); http.get(__ENV.BASE + '/bad'); http.get(__ENV.BASE + '/bad'); }
`)
	r, _ := runScript(t, path, srv.URL, Config{}, 30*time.Second)
	all, exp := r.metric("http_req_duration").Stats(), r.metric("http_req_duration{expected_response:true}").Stats()
	if all.Count != 12 || exp.Count != 4 || r.metric("http_req_failed").Stats().NonZero != 8 {
		t.Errorf("durations %d, expected %d: want 12 and 4", all.Count, exp.Count)
	}
}
