package script

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// An agent's Trend delta is the sparse histogram recording each value
// plainly makes (a packed histogram of the tick, RecordValue(histValue(v))
// per value, as the agent shipped before its values were counted by
// bucket): the same buckets, counts and order, tick after tick on the
// kept table, for spreads whose buckets fit the table and ones that make
// its slots change hands, with zeros, negatives, NaN, infinities and
// values past the histogram.
func TestPendingTrendIsPlainHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 15))
	odd := []float64{0, math.Copysign(0, -1), -3, 0.0004, 0.0005, 0.0015, math.NaN(), math.Inf(1), math.Inf(-1),
		4_294_967.295, 4_294_967.296, 4_294_967.2955, 1e12, 2.0475, 2.048, 2.0485}
	for _, tc := range []struct {
		name  string
		value func(i int) float64
	}{
		{"loopback", func(int) float64 { return 0.2 + rng.ExpFloat64()*0.3 }},
		{"remote", func(int) float64 { return 50 * math.Exp(rng.NormFloat64()*0.3) }},
		{"six-decades", func(int) float64 { return math.Pow(10, rng.Float64()*6-2) }},
		{"whole", func(int) float64 { return float64(rng.IntN(5000)) }},
		{"odd", func(i int) float64 {
			if i%3 == 0 {
				return odd[i/3%len(odd)]
			}
			return rng.Float64() * 100
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMetric("t", Trend, true)
			m.pending = newPending(Trend)
			m.exact = nil // past the exact values: the delta carries buckets alone
			for tick, n := range []int{1, 7, 3000, 20_000, 0, 500} {
				ref := newTrendDelta()
				var sum float64
				for i := range n {
					v := tc.value(i)
					_ = ref.RecordValue(histValue(v))
					sum += v
					m.mu.Lock()
					m.pending.add(v, true, false)
					m.mu.Unlock()
				}
				d, ok := m.take("")
				if ok != (n > 0) {
					t.Fatalf("tick %d: a delta %v after %d values", tick, ok, n)
				}
				var wv, wn []int64
				for v, c := range ref.ForEachBucket {
					wv, wn = append(wv, v), append(wn, c)
				}
				if !slices.Equal(d.HistV, wv) || !slices.Equal(d.HistN, wn) {
					t.Fatalf("tick %d (%d values): buckets %d, want %d; equal values %v, counts %v",
						tick, n, len(d.HistV), len(wv), slices.Equal(d.HistV, wv), slices.Equal(d.HistN, wn))
				}
				if d.Count != uint64(n) || (n > 0 && !math.IsNaN(sum) && d.Sum != sum) {
					t.Fatalf("tick %d: count %d sum %v, want %d and %v", tick, d.Count, d.Sum, n, sum)
				}
			}
		})
	}
}

// A slot at its 32-bit limit hands its count on and starts over.
func TestPendingTrendSlotFull(t *testing.T) {
	p := newPendingTrend()
	k := bucketKey(5000)
	p.add(5000)
	p.slots[slotOf(k)].n = math.MaxUint32 // as if 2^32 - 1 values had come
	p.add(5001)
	p.add(5000)
	vs, ns := p.drain()
	if !slices.Equal(vs, []int64{int64(k)}) || !slices.Equal(ns, []int64{math.MaxUint32 + 2}) {
		t.Fatalf("buckets %v counts %v, want [%d] [%d]", vs, ns, k, int64(math.MaxUint32)+2)
	}
	if vs, ns := p.drain(); vs != nil || ns != nil {
		t.Fatalf("a drained table gave %v %v again", vs, ns)
	}
}
