package script

import (
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A Trend past its exact values records every value in its HDR histogram.
// One RecordValue is some 60 instructions, most of them the bucket's index,
// and a keep-alive request records four or five non-zero trend values.
// Most values of a trend fall in a few hundred buckets (three significant
// digits; 15 000 loopback requests' durations fall in 300–500), so the values
// are counted per bucket in a small table first (bucketCache) and go into
// the histogram as one RecordValues(bucket, count) when a slot is wanted by
// another bucket, or when the histogram is read (Metric.histogram). A
// histogram's counts do not depend on the order or the grouping of the
// records, and every count lands in the bucket of the values it counts, so
// the histogram read is the one recording each value would have made.

// newTrendHist is a Trend's histogram: values × trendScale from 1 (0 is in
// the first bucket too) to an hour in milliseconds, three significant
// digits. bucketKey depends on this geometry (TestBucketKeyIsHDRs).
func newTrendHist() *hdr.Histogram { return hdr.New(0, 3_600_000*trendScale, 3) }

// subBucketBits is log2 of the histogram's sub-bucket count: 2048 for three
// significant digits (the smallest power of two at least 2 × 10³), so a
// value below 2048 is a bucket of its own and a wider value shares its
// bucket with the values equal to it in its top subBucketBits bits.
const subBucketBits = 11

// cacheBits is log2 of a bucketCache's slots: 1024 of 8 bytes, next to the
// histogram's own 23 552 counts of 8. In a loopback request's trends the
// slot a value wants holds its own bucket 95–98 % of the time with 1024
// slots (83–98 % with 256). A value whose slot another bucket holds costs
// a plain record and some 20 instructions more (its key, its slot), so a
// trend spread over far more buckets than slots rests its table (below).
const cacheBits = 10

// maxCacheable bounds the values a bucketCache counts: a key is 32 bits.
// The histogram tracks up to 2^32 - 1; a value at or above it goes to
// RecordValue as it is (which refuses it, as before).
const maxCacheable = 1 << 32

// bucketKey is the smallest value of h's histogram bucket (h > 0): h with
// the bits below its top subBucketBits cleared, as HDR's lowest
// equivalent value for unit magnitude 0.
func bucketKey(h uint64) uint64 {
	if h >= 1<<subBucketBits { // below it, a bucket per value
		s := bits.Len64(h) - subBucketBits
		return h >> s << s
	}
	return h
}

// cacheSlot is a count of values of the bucket whose smallest value is key
// not yet in the histogram. A slot that has held a bucket keeps its key
// with n 0 after a flush, so the bucket's next value finds it; key 0 (the
// zero value) is never a bucket key here, zeros having their own count.
type cacheSlot struct{ key, n uint32 }

// bucketCache is a Trend's values past its exact ones, counted by bucket
// before they go into hist. The metric's mu guards it.
type bucketCache struct {
	m *Metric // whose values these are
	// misses are the values since the last look at the hit rate that found
	// another bucket in their slot; since is the trend's count at that look.
	misses uint32
	since  uint64
	slots  [1 << cacheBits]cacheSlot
}

// A table pays while most values find their bucket in it. A value whose
// slot holds another bucket costs a plain record and more, and measured
// alone (BenchmarkTrendRecord) a table whose values miss 40 % of the time
// already takes longer than plain records, though fewer instructions:
// the hit-or-miss branch is unpredictable. So every missCheck misses the
// rate is looked at; past one miss in four values the table rests (its
// counts in the histogram) and the trend records plainly for plainFor
// values before it is tried again.
const (
	missCheck = 1024
	plainFor  = 1 << 16
)

// slotOf is key's slot: Fibonacci hashing, whose top bits spread both the
// consecutive keys of the first bucket and the multiples of 2^s above it.
func slotOf(key uint64) uint64 { return key * 0x9E3779B97F4A7C15 >> (64 - cacheBits) }

// put makes key's slot count key's bucket, one value so far: what it
// counted of another bucket (or, full, of the same) goes into the
// histogram first. The common case, the slot counting key's bucket
// already, is inline in recordLocked. c.m.mu held.
func (c *bucketCache) put(key uint32) {
	e := &c.slots[slotOf(uint64(key))]
	if e.n != 0 {
		_ = c.m.hist.RecordValues(int64(e.key), int64(e.n))
	}
	e.key, e.n = key, 1
	if c.misses++; c.misses < missCheck {
		return
	}
	m := c.m
	if m.count-c.since < 4*missCheck { // more than one value in four missed
		c.flush()
		m.buckets, m.rested, m.plainUntil = nil, c, m.count+plainFor
	}
	c.misses, c.since = 0, m.count
}

// recordPlain records v, past the exact values, in the histogram itself,
// m.mu held: the first value past them, when the table is made
// (pastExact; plainUntil is 0 until then), and the values of a trend whose
// table rests, which is tried again after plainFor of them. Rounded as
// recordLocked rounds (see there): a resting trend's record costs what it
// did before tables.
func (m *Metric) recordPlain(v float64) {
	if m.count >= m.plainUntil {
		if c := m.rested; c == nil {
			m.pastExact()
		} else {
			c.misses, c.since = 0, m.count
			m.buckets, m.rested = c, nil
		}
	}
	switch x := v * trendScale; {
	case x >= 0.5:
		_ = m.hist.RecordValue(int64(x + 0.5)) // from 2^32 on refused, as histValue's
	case x < 0.5:
		m.zeros++
	default: // NaN
		m.histRecord(v)
	}
}

// flush puts every count into the histogram; the slots keep their keys.
func (c *bucketCache) flush() {
	for i := range c.slots {
		if e := &c.slots[i]; e.n != 0 {
			_ = c.m.hist.RecordValues(int64(e.key), int64(e.n))
			e.n = 0
		}
	}
}
