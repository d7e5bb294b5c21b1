package script

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
)

// want is what one metric must hold after a run: every value counted
// once, none lost.
type want struct {
	count, nonZero uint64
	sum, min, max  float64
}

func (w *want) add(v float64) {
	if w.count == 0 || v < w.min {
		w.min = v
	}
	if w.count == 0 || v > w.max {
		w.max = v
	}
	w.count++
	w.sum += v
	if v != 0 {
		w.nonZero++
	}
}

func (w want) check(t *testing.T, what string, count, nonZero uint64, sum, min, max float64) {
	t.Helper()
	if count != w.count || nonZero != w.nonZero || sum != w.sum || min != w.min || max != w.max {
		t.Errorf("%s: count %d non-zero %d sum %v min %v max %v; want %+v", what, count, nonZero, sum, min, max, w)
	}
}

// TestRequestSetCountsEveryValueOnce: requests recorded by goroutines at
// once, as VUs record them, land exactly once in every http_req_* and
// data_* metric, in the expected-response duration, in tagged
// sub-metrics, in the point hook and in the agent's pending deltas; the
// tag set is built once per request. Values are whole milliseconds and
// bytes, so that sums are exact in any order.
//
// Under summaryMode full (a copy per scenario) the set goes value by value
// (recordEach): the same figures, and each scenario copy's too.
func TestRequestSetCountsEveryValueOnce(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-lock", true: "per-scenario"}[full], func(t *testing.T) { requestSetCountsOnce(t, full) })
	}
}

func requestSetCountsOnce(t *testing.T, full bool) {
	const workers, each = 4, 300
	var pmu sync.Mutex
	points := map[string]*want{}
	ms := metrics{perScenario: full, deltas: true, points: func(m *Metric, v float64, tags map[string]string) {
		if tags["status"] == "" {
			t.Errorf("%s: a point without the request's tags", m.Name)
		}
		pmu.Lock()
		defer pmu.Unlock()
		if points[m.Name] == nil {
			points[m.Name] = &want{}
		}
		points[m.Name].add(v)
	}}
	b := newBuiltins(&ms)
	sub := func(parent *Metric, key, tag, value string) *Metric {
		m, err := ms.getKey(key, parent.Type, parent.IsTime)
		if err != nil {
			t.Fatal(err)
		}
		parent.addSub(subMetric{filter: map[string]string{tag: value}, m: m})
		return m
	}
	okDuration := sub(b.httpReqDuration, "http_req_duration{status:200}", "status", "200")
	failedReqs := sub(b.httpReqs, "http_reqs{status:500}", "status", "500")
	okReceived := sub(b.dataReceived, "data_received{status:200}", "status", "200")

	// request i of the run: its timings, whether it failed, its bytes
	req := func(i int) (engine.Timings, bool, int, int) {
		ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
		return engine.Timings{Duration: ms(i%7 + 10), Blocked: ms(i % 2), Connecting: ms(i % 3), TLSHandshaking: ms(i % 4),
			Sending: ms(i%5 + 1), Waiting: ms(i%6 + 2), Receiving: ms(i%8 + 3)}, i%5 == 0, i%3 + 1, 100 + i%11
	}
	var tagSets atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				i := w*each + k
				tm, failed, sent, recv := req(i)
				b.request("s", tm, failed, sent, recv, func() map[string]string {
					tagSets.Add(1)
					status := 200
					if failed {
						status = 500
					}
					return map[string]string{"status": strconv.Itoa(status)}
				})
			}
		}()
	}
	wg.Wait()

	exp := map[*Metric]*want{}
	for _, m := range []*Metric{b.httpReqs, b.httpReqDuration, b.httpReqFailed, b.expectedDuration, b.blocked, b.connecting,
		b.tlsHandshaking, b.sending, b.waiting, b.receiving, b.dataSent, b.dataReceived, okDuration, failedReqs, okReceived} {
		exp[m] = &want{}
	}
	for i := range workers * each {
		tm, failed, sent, recv := req(i)
		d := func(d time.Duration) float64 { return float64(d / time.Millisecond) }
		exp[b.httpReqs].add(1)
		exp[b.httpReqDuration].add(d(tm.Duration))
		exp[b.blocked].add(d(tm.Blocked))
		exp[b.connecting].add(d(tm.Connecting))
		exp[b.tlsHandshaking].add(d(tm.TLSHandshaking))
		exp[b.sending].add(d(tm.Sending))
		exp[b.waiting].add(d(tm.Waiting))
		exp[b.receiving].add(d(tm.Receiving))
		exp[b.dataSent].add(float64(sent))
		exp[b.dataReceived].add(float64(recv))
		if failed {
			exp[b.httpReqFailed].add(1)
			exp[failedReqs].add(1)
		} else {
			exp[b.httpReqFailed].add(0)
			exp[b.expectedDuration].add(d(tm.Duration))
			exp[okDuration].add(d(tm.Duration))
			exp[okReceived].add(float64(recv))
		}
	}
	if n := tagSets.Load(); n != workers*each {
		t.Errorf("%d tag sets built for %d requests", n, workers*each)
	}
	for m, w := range exp {
		s := m.Stats()
		w.check(t, m.Name, s.Count, s.NonZero, s.Sum, s.Min, s.Max)
		if m.Type == Trend {
			m.mu.Lock()
			n := m.histogram().TotalCount()
			m.mu.Unlock()
			if n != int64(w.count) || uint64(len(m.exact)) != w.count {
				t.Errorf("%s: %d values in the histogram, %d exact; want %d", m.Name, n, len(m.exact), w.count)
			}
		}
		if sc := m.scenarios()["s"]; full && metricName.MatchString(m.Name) {
			if sc == nil {
				t.Errorf("%s: no scenario copy", m.Name)
			} else {
				s := sc.Stats()
				w.check(t, m.Name+" scenario s", s.Count, s.NonZero, s.Sum, s.Min, s.Max)
			}
		} else if sc != nil {
			t.Errorf("%s: a scenario copy without summaryMode full", m.Name)
		}
		d, ok := m.take("")
		if !ok {
			t.Errorf("%s: no delta", m.Name)
			continue
		}
		w.check(t, m.Name+" delta", d.Count, d.NonZero, d.Sum, d.Min, d.Max)
		if m.Type == Trend && uint64(len(d.Exact)) != w.count {
			t.Errorf("%s delta: %d exact values, want %d", m.Name, len(d.Exact), w.count)
		}
		if p := points[m.Name]; metricName.MatchString(m.Name) {
			if p == nil {
				t.Errorf("%s: no points", m.Name)
				continue
			}
			w.check(t, m.Name+" points", p.count, p.nonZero, p.sum, p.min, p.max)
		} else if p != nil {
			t.Errorf("%s: a sub-metric got points", m.Name)
		}
	}
}

// TestScriptRequestsCountedOnce: a script's requests, through the runner,
// are each counted once in every built-in request metric, in a tagged
// sub-metric threshold, in the points and in the deltas; one VU, so that
// the points' sums add in the metrics' order and compare exactly.
func TestScriptRequestsCountedOnce(t *testing.T) {
	base, _ := echo(t)
	const iters = 30
	path := writeScript(t, "once.js", `
import http from 'k6/http';
export const options = {
  scenarios: { s: { executor: 'shared-iterations', vus: 1, iterations: `+strconv.Itoa(iters)+` } },
  thresholds: {
    'http_reqs{name:a}': ['count==`+strconv.Itoa(iters)+`'],
    'http_req_duration{name:a}': ['count==`+strconv.Itoa(iters)+`'],
    'http_req_failed{status:404}': ['rate==1'],
  },
};
export default function () {
  http.get(__ENV.BASE + '/a', { tags: { name: 'a' } });
  http.post(__ENV.BASE + '/status/404', 'x');
}
`)
	var pmu sync.Mutex
	points := map[string]*want{}
	cfg := Config{Deltas: true, Points: func(m *Metric, v float64, tags map[string]string) {
		pmu.Lock()
		defer pmu.Unlock()
		if points[m.Name] == nil {
			points[m.Name] = &want{}
		}
		points[m.Name].add(v)
	}}
	r, _ := runScript(t, path, base, cfg, 30*time.Second)
	for _, th := range r.Thresholds() {
		if !th.OK {
			t.Errorf("%s %s: value %v", th.Metric, th.Source, th.Value)
		}
	}
	deltas := map[string]MetricDelta{}
	for _, d := range r.TakeDeltas().Metrics {
		deltas[d.Name] = d
	}
	counts := map[string]uint64{"http_reqs": 2 * iters, "http_req_failed": 2 * iters, "iterations": iters, "iteration_duration": iters,
		"http_req_duration{expected_response:true}": iters, "http_reqs{name:a}": iters, "http_req_duration{name:a}": iters,
		"http_req_failed{status:404}": iters}
	for _, n := range []string{"http_req_duration", "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking",
		"http_req_sending", "http_req_waiting", "http_req_receiving", "data_sent", "data_received"} {
		counts[n] = 2 * iters
	}
	for name, n := range counts {
		m := r.metric(name)
		if m == nil {
			t.Errorf("%s: no metric", name)
			continue
		}
		s := m.Stats()
		if s.Count != n {
			t.Errorf("%s: %d values, want %d", name, s.Count, n)
		}
		if d := deltas[name]; d.Count != s.Count || d.Sum != s.Sum || d.NonZero != s.NonZero {
			t.Errorf("%s: delta %d values sum %v, metric %d sum %v", name, d.Count, d.Sum, s.Count, s.Sum)
		}
		if p := points[name]; metricName.MatchString(name) && (p == nil || p.count != s.Count || p.sum != s.Sum || p.nonZero != s.NonZero) {
			t.Errorf("%s: points %+v, metric %+v", name, p, s)
		}
	}
	if s := r.metric("http_req_failed").Stats(); s.NonZero != iters {
		t.Errorf("http_req_failed: %d failed, want %d", s.NonZero, iters)
	}
}

// TestTagSetsPerValue: a value's point and sub-metrics see its own tags
// and no other's, though the maps they are built in are reused: a request
// or check with tags of its own followed by one without, the second
// carries none of the first's; a sub-metric filtered on such a tag counts
// only the values that had it.
func TestTagSetsPerValue(t *testing.T) {
	_, base := startTarget(t, robust())
	const iters = 20
	path := writeScript(t, "tags.js", `
import http from 'k6/http';
import { check, group } from 'k6';
export const options = {
  iterations: `+strconv.Itoa(iters)+`,
  thresholds: {
    'http_reqs{kind:a}': ['count==`+strconv.Itoa(iters)+`'],
    'checks{ck:x}': ['rate==1'],
  },
};
export default function () {
  http.get(__ENV.BASE + '/a', { tags: { kind: 'a', name: 'n1' } });
  http.get(__ENV.BASE + '/b');
  check(1, { tagged: (v) => v === 1 }, { ck: 'x' });
  group('g', () => { check(0, { plain: (v) => v === 1 }); });
}
`)
	cfg, points := tagPoints("http_reqs", "checks", "iterations", "group_duration")
	r, _ := runScript(t, path, base, cfg, 30*time.Second)
	want := map[string]int{
		"http_reqs expected_response=true,group=,kind=a,method=GET,name=n1,scenario=default,status=200,url=" + base + "/a":      iters,
		"http_reqs expected_response=true,group=,method=GET,name=" + base + "/b,scenario=default,status=200,url=" + base + "/b": iters,
		"checks check=tagged,ck=x,group=,scenario=default":                                                                      iters,
		"checks check=plain,group=::g,scenario=default":                                                                         iters,
		"group_duration group=::g,scenario=default":                                                                             iters,
		"iterations group=,scenario=default":                                                                                    iters,
	}
	wantPoints(t, points(), want)
	for _, th := range r.Thresholds() {
		if !th.OK {
			t.Errorf("%s%v %s: value %v", th.Metric, th.Filter, th.Source, th.Value)
		}
	}
}

// TestSystemTagsDropped: a system tag options.systemTags leaves out is on
// no value, whether throttle wrote it (url) or a script's tags named it
// (vu, by default left out), and a tag of another name stays.
func TestSystemTagsDropped(t *testing.T) {
	_, base := startTarget(t, robust())
	for _, c := range []struct {
		name, opts string
		want       map[string]int
	}{
		{"default", ``, map[string]int{
			"http_reqs expected_response=true,group=,kind=a,method=GET,name=" + base + "/a,scenario=default,status=200,url=" + base + "/a": 2,
			"http_reqs expected_response=true,group=,method=GET,name=" + base + "/b,scenario=default,status=200,url=" + base + "/b":        2,
			"checks check=c,group=,scenario=default,x=1": 2,
		}},
		{"no url, no check", `, systemTags: ['method', 'status', 'name', 'group', 'scenario', 'expected_response', 'vu']`, map[string]int{
			"http_reqs expected_response=true,group=,kind=a,method=GET,name=" + base + "/a,scenario=default,status=200,vu=9": 2,
			"http_reqs expected_response=true,group=,method=GET,name=" + base + "/b,scenario=default,status=200":             2,
			"checks group=,scenario=default,x=1": 2,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeScript(t, "tags.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 2`+c.opts+` };
export default function () {
  http.get(__ENV.BASE + '/a', { tags: { kind: 'a', vu: '9' } });
  http.get(__ENV.BASE + '/b');
  check(1, { c: (v) => v === 1 }, { x: '1', iter: '7' });
}
`)
			cfg, points := tagPoints("http_reqs", "checks")
			runScript(t, path, base, cfg, 30*time.Second)
			wantPoints(t, points(), c.want)
		})
	}
}

// tagPoints is a Config whose point hook counts the values of the named
// metrics by metric and tag set ("name k=v,k=v" sorted); points returns
// the counts so far.
func tagPoints(names ...string) (cfg Config, points func() map[string]int) {
	var mu sync.Mutex
	counts := map[string]int{}
	cfg.Points = func(m *Metric, v float64, tags map[string]string) {
		if !slices.Contains(names, m.Name) {
			return
		}
		keys := make([]string, 0, len(tags))
		for k, v := range tags {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		mu.Lock()
		counts[m.Name+" "+strings.Join(keys, ",")]++
		mu.Unlock()
	}
	return cfg, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
}

// wantPoints checks tagPoints' counts against want, exactly.
func wantPoints(t *testing.T, seen, want map[string]int) {
	t.Helper()
	if len(seen) != len(want) {
		t.Errorf("%d tag sets, want %d: %v", len(seen), len(want), seen)
	}
	for k, n := range want {
		if seen[k] != n {
			t.Errorf("%q: %d points, want %d (all: %v)", k, seen[k], n, seen)
		}
	}
}
