package script

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkTrendRecord is one value recorded into a Trend past its exact
// values (under its lock, as recordSet does), for three spreads of values:
// a loopback request's duration (a few hundred buckets), a remote one's
// (50 ms, log-normal σ 0.3: a few thousand) and values over six decades
// (tens of thousands, far more than a bucketCache's slots: its worst case).
// Count instructions by difference of two -benchtime counts (cachegrind).
func BenchmarkTrendRecord(b *testing.B) {
	for _, c := range []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"loopback", func(r *rand.Rand) float64 { return 0.18 * math.Exp(r.NormFloat64()*0.2) }},
		{"remote", func(r *rand.Rand) float64 { return 50 * math.Exp(r.NormFloat64()*0.3) }},
		{"wide", func(r *rand.Rand) float64 { return math.Exp(r.Float64()*14-5) * 1000 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			vals := make([]float64, 1<<16)
			for i := range vals {
				vals[i] = c.gen(r)
			}
			m := newMetric("t", Trend, true)
			for i := range exactValues + 1 {
				m.recordLocked(vals[i%len(vals)])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				m.mu.Lock()
				m.recordLocked(vals[i&(len(vals)-1)])
				m.mu.Unlock()
			}
		})
	}
}
