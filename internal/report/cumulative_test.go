package report

import (
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Cumulative counts every recorded latency, drained into a closed window or
// still in the shards, at or below each bound, and never falls.
func TestCumulative(t *testing.T) {
	rec, err := NewRecorder(0.05)
	if err != nil {
		t.Fatal(err)
	}
	bounds := []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, time.Second}
	counts := make([]uint64, len(bounds))
	if total, sum := rec.Cumulative(bounds, counts); total != 0 || sum != 0 || counts[3] != 0 {
		t.Fatalf("empty recorder: total %d, sum %v, counts %v", total, sum, counts)
	}
	for range 10 {
		rec.Record(500 * time.Microsecond)
	}
	for range 20 {
		rec.Record(5 * time.Millisecond) // on a bound: counts at it
	}
	rec.Observe(window(0, 100, 30, 0, governor.SignalSlowStart))
	for range 5 {
		rec.Record(7 * time.Millisecond)
	}
	rec.Record(2 * time.Second) // above every bound: in total only
	total, sum := rec.Cumulative(bounds, counts)
	if want := []uint64{10, 30, 35, 35}; total != 36 || !equal(counts, want) {
		t.Errorf("total %d, counts %v; want 36, %v", total, counts, want)
	}
	if want := 10*500*time.Microsecond + 20*5*time.Millisecond + 5*7*time.Millisecond + 2*time.Second; !near(sum, want) {
		t.Errorf("sum %v, want %v", sum, want)
	}
	before := append([]uint64(nil), counts...)
	rec.Record(time.Millisecond)
	rec.Observe(window(1, 100, 6, 0, governor.SignalSlowStart))
	if total, _ := rec.Cumulative(bounds, counts); total != 37 || counts[0] != before[0]+1 || counts[3] != before[3]+1 {
		t.Errorf("after one more at 1ms: total %d, counts %v (before %v)", total, counts, before)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkCumulative is one scrape's read of the latency histogram.
func BenchmarkCumulative(b *testing.B) {
	rec, _ := NewRecorder(0.05)
	for i := range 100000 {
		rec.Record(time.Duration(1+i%5000) * 10 * time.Microsecond) // 10 µs – 50 ms
	}
	bounds := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second}
	counts := make([]uint64, len(bounds))
	b.ReportAllocs()
	for b.Loop() {
		rec.Cumulative(bounds, counts)
	}
}
