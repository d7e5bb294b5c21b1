package script

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// An agent ships each Trend's values of a tick as a sparse histogram
// (MetricDelta.HistV/HistN). It recorded every value in a packed HDR
// histogram made anew each tick: a bucket's index and a search of the
// sparse buckets per value, and the histogram's arrays grown again every
// tick (bytes per iteration, docs/performance.md "Bytes per iteration").
// A tick's values fall in few buckets, so they are counted per bucket in a
// table first, as a Trend's own values are past its exact ones
// (histcache.go: the same bucket keys and slots), and go into the
// histogram only when a slot changes hands or the delta is taken. The
// histogram and the table are kept from tick to tick. Counts do not depend
// on the order or the grouping of records, and each count lands in the
// bucket of the values it counts: the delta is the one recording every
// value would have made (TestPendingTrendIsPlainHistogram).

// newTrendDelta is a Trend's histogram of one tick: the geometry of
// Metric.hist.
func newTrendDelta() *hdr.PackedHistogram { return hdr.NewPacked(1, 3_600_000*trendScale, 3) }

// pendingTrend is a Trend's values since the last take, by histogram
// value (histValue): zeros counted apart, the rest in slots by bucket,
// what a slot gave up and what no slot takes in hist. The metric's mu
// guards it while it is the metric's pending delta; take drains it.
type pendingTrend struct {
	zeros uint64
	hist  *hdr.PackedHistogram
	// used are the slots filled since the last drain, which visits them
	// alone (a tick's values fill a few dozen of the 1024) and empties
	// them, keys too: a slot's first value after a drain is a miss.
	used  []uint16
	slots [1 << cacheBits]cacheSlot
}

func newPendingTrend() *pendingTrend { return &pendingTrend{hist: newTrendDelta()} }

// add counts one histogram value h.
func (t *pendingTrend) add(h int64) {
	switch {
	case h == 0:
		t.zeros++
	case h > 0 && h < maxCacheable:
		k := bucketKey(uint64(h))
		i := slotOf(k)
		e := &t.slots[i]
		if e.key == uint32(k) && e.n != math.MaxUint32 {
			e.n++
			return
		}
		if e.n != 0 { // another bucket's count, or this one's full
			_ = t.hist.RecordValues(int64(e.key), int64(e.n))
		} else {
			t.used = append(t.used, uint16(i))
		}
		e.key, e.n = uint32(k), 1
	default: // negative (NaN's conversion) or past the histogram: refused there, as before
		_ = t.hist.RecordValue(h)
	}
}

// drain returns the histogram of every value counted, as a delta's sparse
// buckets (each named by its lowest value, in ascending order), and
// empties t; nil when no value went in.
func (t *pendingTrend) drain() (vs, ns []int64) {
	for _, i := range t.used {
		e := &t.slots[i]
		_ = t.hist.RecordValues(int64(e.key), int64(e.n))
		*e = cacheSlot{}
	}
	t.used = t.used[:0]
	if t.zeros != 0 {
		_ = t.hist.RecordValues(0, int64(t.zeros))
		t.zeros = 0
	}
	n := 0
	for range t.hist.ForEachBucket {
		n++
	}
	if n > 0 {
		vs, ns = make([]int64, 0, n), make([]int64, 0, n)
		for v, c := range t.hist.ForEachBucket {
			vs, ns = append(vs, v), append(ns, c)
		}
	}
	t.hist.Reset()
	return vs, ns
}
