package script

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestBucketKeyIsHDRs: bucketKey(v) is the lowest value of v's bucket in a
// Trend's histogram (equivalent to v, and v's bucket holds nothing below
// it) for every value below 2^20, at and around every sub-bucket edge up to
// maxCacheable, and for random values below it; and maxCacheable is where
// the histogram starts refusing values.
func TestBucketKeyIsHDRs(t *testing.T) {
	h := newTrendHist()
	check := func(v uint64) {
		k := bucketKey(v)
		if k > v || !h.ValuesAreEquivalent(int64(v), int64(k)) || k > 0 && h.ValuesAreEquivalent(int64(k-1), int64(v)) {
			t.Fatalf("bucketKey(%d) = %d: not the lowest value of its bucket", v, k)
		}
	}
	for v := uint64(1); v < 1<<20; v++ {
		check(v)
	}
	for s := 0; s <= 32-subBucketBits; s++ { // each bucket's sub-buckets, 2^s wide
		for i := uint64(1 << (subBucketBits - 1)); i < 1<<subBucketBits; i++ {
			edge := i << s
			for _, v := range []uint64{edge - 1, edge, edge + 1, edge + 1<<s - 1} {
				if v > 0 && v < maxCacheable {
					check(v)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		check(1 + r.Uint64N(maxCacheable-1))
	}
	if err := h.RecordValue(maxCacheable - 1); err != nil {
		t.Fatalf("the largest cacheable value is refused: %v", err)
	}
	if err := h.RecordValue(maxCacheable); err == nil {
		t.Fatal("maxCacheable is recorded; values from it on would be counted by a cache that drops them")
	}
}

// plainTrend is the reference a Trend's histogram figures are held to: a
// plain HDR histogram of the same geometry recording every value as it
// comes, int64(math.Round(math.Max(v, 0) × trendScale)).
type plainTrend struct{ h *hdr.Histogram }

func newPlainTrend() plainTrend { return plainTrend{hdr.New(0, 3_600_000*trendScale, 3)} }

func (p plainTrend) add(v float64) {
	_ = p.h.RecordValue(int64(math.Round(math.Max(v, 0) * trendScale)))
}

// quantiles are the percentiles compared: the summary's, thresholds' usual
// ones, the ends.
var quantiles = []float64{0, 1, 10, 25, 50, 66.6, 90, 95, 99, 99.9, 99.99, 100}

// sameAsPlain fails unless m (read as Stats, Quantile and the summary read
// it) has every histogram figure of ref: the same counts in every bucket,
// and each percentile the value ref gives, clamped to m's min and max as
// quantile does. want is the count of values.
func sameAsPlain(t *testing.T, what string, m *Metric, ref plainTrend, want int) {
	t.Helper()
	s := m.Stats()
	if s.Count != uint64(want) {
		t.Fatalf("%s: count %d, want %d", what, s.Count, want)
	}
	pct := func(q float64) float64 {
		return math.Min(math.Max(float64(ref.h.ValueAtQuantile(q))/trendScale, s.Min), s.Max)
	}
	if s.Med != pct(50) || s.P90 != pct(90) || s.P95 != pct(95) {
		t.Errorf("%s: med %v, p90 %v, p95 %v; the plain histogram's %v, %v, %v", what, s.Med, s.P90, s.P95, pct(50), pct(90), pct(95))
	}
	for _, q := range quantiles {
		if got, want := m.Quantile(q), pct(q); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s: p(%v) = %v; the plain histogram's %v", what, q, got, want)
		}
	}
	m.mu.Lock()
	h := m.histogram()
	same := h.TotalCount() == ref.h.TotalCount() && slices.Equal(h.Export().Counts, ref.h.Export().Counts)
	m.mu.Unlock()
	if !same {
		t.Errorf("%s: %d values in the histogram, the plain one %d, counts differ", what, h.TotalCount(), ref.h.TotalCount())
	}
}

// trendValues are value sets for TestTrendPastExactIsPlainHistogram.
var trendValues = []struct {
	name string
	gen  func(r *rand.Rand, i int) float64
}{
	// a keep-alive request's parts: few buckets, most slots hit
	{"narrow", func(r *rand.Rand, _ int) float64 { return 0.15 + r.NormFloat64()*0.02 }},
	// latencies over six decades: thousands of buckets, slots taken over
	{"wide", func(r *rand.Rand, _ int) float64 { return math.Exp(r.Float64()*14-5) * 1000 }},
	// zeros, negatives, -0 and halves among ordinary values
	{"zeros-and-negatives", func(r *rand.Rand, i int) float64 {
		switch i % 5 {
		case 0:
			return 0
		case 1:
			return -r.Float64() * 100
		case 2:
			return math.Copysign(0, -1)
		case 3:
			return float64(r.IntN(3000)) + 0.0005 // a half after scaling, rounded up
		}
		return r.ExpFloat64() * 40
	}},
	// NaN, infinities (not first: a NaN min would make every percentile NaN), the edges of the cacheable range and past the
	// histogram's: refused or rounded as a plain record does
	{"odd", func(r *rand.Rand, i int) float64 {
		odd := [...]float64{1e-300, math.NaN(), math.Inf(1), math.Inf(-1), 0.0004999, 0.0005, (maxCacheable - 1) / trendScale,
			(maxCacheable - 0.5) / trendScale, maxCacheable / trendScale, 3_600_000, 1e300, (1<<52 + 1) / trendScale}
		if i%3 == 0 {
			return odd[i/3%len(odd)]
		}
		return r.ExpFloat64() * 400
	}},
	// whole milliseconds: few values, each many times
	{"whole", func(r *rand.Rand, _ int) float64 { return float64(r.IntN(20)) }},
}

// TestTrendPastExactIsPlainHistogram: a Trend past its exact values, its
// values counted by bucket before they go into its histogram (bucketCache),
// reports every figure a plain histogram fed the same values gives — the
// bucket counts, med, p(90), p(95) and the other percentiles — when read
// only at the end, and when read after each of the first values past them and every thousand on the way
// (each read folds the counts in, the next values count afresh).
func TestTrendPastExactIsPlainHistogram(t *testing.T) {
	for _, vs := range trendValues {
		for _, every := range []int{0, 1, 997} { // 0: read at the end; 1: after each value past exactValues
			n := exactValues + 25_000
			if every == 1 {
				n = exactValues + 200
			}
			r := rand.New(rand.NewPCG(5, uint64(every)))
			m, ref := newMetric("t", Trend, true), newPlainTrend()
			keys := map[uint64]bool{}
			for i := range n {
				v := vs.gen(r, i)
				if err := m.add("", v); err != nil {
					t.Fatal(err)
				}
				ref.add(v)
				if h := int64(math.Round(math.Max(v, 0) * trendScale)); h > 0 && h < maxCacheable {
					keys[bucketKey(uint64(h))] = true
				}
				if every > 0 && i >= exactValues && i%every == 0 {
					sameAsPlain(t, vs.name, m, ref, i+1)
				}
			}
			if vs.name == "wide" && (len(keys) < 4<<cacheBits || m.rested == nil && every != 1) {
				t.Fatalf("wide: %d buckets, want many more than the %d slots; table resting %v", len(keys), 1<<cacheBits, m.rested != nil)
			}
			if vs.name == "narrow" && (m.buckets == nil || m.rested != nil) {
				t.Fatal("narrow: the table rests")
			}
			sameAsPlain(t, vs.name, m, ref, n)
		}
	}
}

// TestBucketSlotFull: a slot whose count reaches its limit puts it into
// the histogram and counts on from one; nothing is lost or counted twice.
func TestBucketSlotFull(t *testing.T) {
	m, ref := newMetric("t", Trend, true), newPlainTrend()
	for i := range exactValues + 1 {
		v := float64(i % 50)
		_ = m.add("", v)
		ref.add(v)
	}
	const v = 12.345 // 12 345: a bucket of its own, 4 wide
	k := bucketKey(12_345)
	e := &m.buckets.slots[slotOf(k)]
	*e = cacheSlot{key: uint32(k), n: math.MaxUint32 - 2} // as if that many had come
	_ = ref.h.RecordValues(12_345, math.MaxUint32-2)
	for range 5 {
		_ = m.add("", v)
		ref.add(v)
	}
	if e.n != 3 {
		t.Fatalf("the full slot counts %d, want 3 after it was put in", e.n)
	}
	m.mu.Lock()
	h := m.histogram()
	same := h.TotalCount() == ref.h.TotalCount() && slices.Equal(h.Export().Counts, ref.h.Export().Counts)
	m.mu.Unlock()
	if !same || e.n != 0 || e.key != uint32(k) {
		t.Fatalf("total %d, plain %d, counts equal %v; slot %+v after the read", h.TotalCount(), ref.h.TotalCount(), same, *e)
	}
}

// TestMergedTrendPastExactIsPlainHistogram: a controller's trend merged from
// three agents' deltas (the wire's JSON in between), past the exact values
// on the agents and on the controller, and with values of its own, has
// every histogram figure of one plain histogram fed every value.
func TestMergedTrendPastExactIsPlainHistogram(t *testing.T) {
	for _, vs := range trendValues {
		r := rand.New(rand.NewPCG(9, 10))
		merged, ref := newMetric("t", Trend, true), newPlainTrend()
		agents := make([]*Metric, 3)
		for i := range agents {
			agents[i] = newMetric("t", Trend, true)
			agents[i].pending = newPending(Trend)
		}
		take := func(a *Metric) { takeInto(t, a, merged) }
		n := 4*exactValues + 5000
		for i := range n {
			v := vs.gen(r, i)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = float64(i % 7) // the script API drops them; JSON cannot carry them
			}
			ref.add(v)
			if i%4 == 3 {
				_ = merged.add("", v)
			} else {
				_ = agents[i%4].add("", v)
			}
			if i%1009 == 0 {
				take(agents[i%3])
			}
		}
		for _, a := range agents {
			take(a)
		}
		if merged.buckets == nil {
			t.Fatalf("%s: the controller's own values never went past the exact ones", vs.name)
		}
		sameAsPlain(t, vs.name, merged, ref, n)
	}
}

// TestTrendRoundingPastExact: past its exact values a Trend rounds v ×
// trendScale as histValue (math.Round) does, at the edges of its inline
// rounding: around a half (x + 0.5 is only taken from 0.5 on), halves,
// 2^52, the cacheable limit. Each edge x is approached by the eight floats
// v nearest x / trendScale, whose products fall on both sides of x (on it,
// for the halves).
func TestTrendRoundingPastExact(t *testing.T) {
	xs := []float64{0.5, 1.5, 2.5, 2047.5, 4095.5, 1<<51 + 0.5, 1<<52 - 0.5, 1 << 52, maxCacheable - 0.5, maxCacheable, 1e-300}
	m, ref := newMetric("t", Trend, true), newPlainTrend()
	for i := range exactValues {
		_ = m.add("", float64(i%9))
		ref.add(float64(i % 9))
	}
	n, onHalf := exactValues, 0
	for _, x := range xs {
		v := x / trendScale
		for range 4 {
			v = math.Nextafter(v, 0)
		}
		for range 8 {
			for range 3 {
				_ = m.add("", v)
				ref.add(v)
				n++
			}
			if p := v * trendScale; p == x && x != math.Trunc(x) {
				onHalf++
			}
			v = math.Nextafter(v, math.Inf(1))
		}
	}
	if onHalf < 3 {
		t.Fatalf("%d halves hit exactly", onHalf)
	}
	sameAsPlain(t, "edges", m, ref, n)
}

// TestSummaryPastExactIsPlainHistogram: a script's Trend of 15 000 values
// reports, in handleSummary's data and in its thresholds, the figures of
// a plain histogram fed the same values: min, max, avg, med, count and each
// percentile asked, and a threshold at the plain p(99) passes with <= and
// fails with <.
func TestSummaryPastExactIsPlainHistogram(t *testing.T) {
	const n = exactValues + 5000
	value := func(i int) float64 { // what the script adds, in the same float64 arithmetic
		if i%5 == 0 {
			return 0
		}
		return float64(i*7919%10007) * 0.137
	}
	ref := newPlainTrend()
	minV, maxV, sum := math.Inf(1), math.Inf(-1), 0.0
	for i := range n {
		v := value(i)
		ref.add(v)
		minV, maxV, sum = math.Min(minV, v), math.Max(maxV, v), sum+v
	}
	pct := func(q float64) float64 {
		return math.Min(math.Max(float64(ref.h.ValueAtQuantile(q))/trendScale, minV), maxV)
	}
	p99 := strconv.FormatFloat(pct(99), 'g', -1, 64)
	src := fmt.Sprintf(`
import { Trend } from 'k6/metrics';
const t = new Trend('t');
export const options = {
  iterations: 1,
  summaryTrendStats: ['min', 'max', 'avg', 'med', 'count', 'p(10)', 'p(90)', 'p(95)', 'p(99)', 'p(99.9)'],
  thresholds: { t: ['p(99)<=%[2]s', 'p(99)<%[2]s'] },
};
export default function () {
  for (let i = 0; i < %[1]d; i++) t.add(i %% 5 === 0 ? 0 : (i * 7919 %% 10007) * 0.137);
}
export function handleSummary(data) { return { stdout: JSON.stringify(data.metrics.t) }; }
`, n, p99)
	_, res := runScript(t, writeScript(t, "t.js", src), "", Config{}, 60*time.Second)
	if len(res.Outputs) != 1 {
		t.Fatalf("outputs %+v", res.Outputs)
	}
	var got struct {
		Values     map[string]float64
		Thresholds map[string]struct{ OK bool }
	}
	if err := json.Unmarshal(res.Outputs[0].Data, &got); err != nil {
		t.Fatalf("%v: %s", err, res.Outputs[0].Data)
	}
	want := map[string]float64{"min": minV, "max": maxV, "avg": sum / n, "med": pct(50), "count": n,
		"p(10)": pct(10), "p(90)": pct(90), "p(95)": pct(95), "p(99)": pct(99), "p(99.9)": pct(99.9)}
	for k, w := range want {
		if g, ok := got.Values[k]; !ok || g != w && !(k == "avg" && math.Abs(g-w) < 1e-9*w) {
			t.Errorf("%s = %v, the plain histogram's %v", k, g, w)
		}
	}
	if !got.Thresholds["p(99)<="+p99].OK || got.Thresholds["p(99)<"+p99].OK {
		t.Errorf("thresholds %+v: want p(99)<=%s passed and p(99)<%s crossed", got.Thresholds, p99, p99)
	}
}

// TestTrendTableRests: a trend whose values miss their slots too often
// records them plainly (its table resting, its counts in the histogram),
// tries the table again after plainFor values, keeps it once they fit,
// and reads as a plain histogram at every step.
func TestTrendTableRests(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m, ref := newMetric("t", Trend, true), newPlainTrend()
	n := 0
	add := func(count int, gen func() float64) {
		for range count {
			v := gen()
			_ = m.add("", v)
			ref.add(v)
			n++
		}
	}
	wide := func() float64 { return math.Exp(r.Float64()*14-5) * 1000 }
	narrow := func() float64 { return 0.15 + r.NormFloat64()*0.02 }
	add(exactValues+100, narrow)
	if m.buckets == nil || m.rested != nil {
		t.Fatal("no table past the exact values")
	}
	add(20*missCheck, wide)
	if m.buckets != nil || m.rested == nil {
		t.Fatalf("after %d wide values the table is still used", 20*missCheck)
	}
	sameAsPlain(t, "resting", m, ref, n)
	add(plainFor/2, narrow)
	if m.buckets != nil {
		t.Fatal("the table tried again before plainFor values")
	}
	sameAsPlain(t, "resting, narrow", m, ref, n)
	add(plainFor, narrow)
	if m.buckets == nil || m.rested != nil {
		t.Fatal("the table not used again for narrow values")
	}
	sameAsPlain(t, "used again", m, ref, n)
	add(20*missCheck, wide)
	add(3*missCheck, narrow)
	sameAsPlain(t, "resting again", m, ref, n)
}

// takeInto merges what agent gained since its last take into merged, the
// delta through JSON as it travels.
func takeInto(t *testing.T, agent, merged *Metric) {
	t.Helper()
	d, ok := agent.take("")
	if !ok {
		return
	}
	b, _ := json.Marshal(d)
	var back MetricDelta
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := merged.merge(back); err != nil {
		t.Fatal(err)
	}
}
