package target

import "time"

// The Collapse model measures the arrival rate over the last second, in
// buckets of a tenth of a second. Only completed buckets count, so at a
// steady arrival rate the measure is exact and does not saw-tooth within a
// bucket; the price is a lag of up to 1.1 s after the load changes, well
// inside a governor window.
const (
	meterBuckets = 10
	meterBucket  = 100 * time.Millisecond
	meterSpan    = meterBuckets * meterBucket
)

// rateMeter counts arrivals per bucket in a ring. The zero value with an
// epoch set is ready to use; it is not safe for concurrent use.
type rateMeter struct {
	epoch  time.Time
	head   int64 // index of the newest bucket since epoch
	counts [meterBuckets + 1]uint64
}

// observe records one arrival at now and returns the arrival rate per second
// over the meterBuckets buckets completed before now's bucket. An arrival
// before the newest bucket (a clock that stepped back) counts in the newest.
func (m *rateMeter) observe(now time.Time) float64 {
	idx := int64(now.Sub(m.epoch) / meterBucket)
	if idx > m.head {
		// Clear the buckets the clock skipped over (at most the whole ring).
		for i := m.head + 1; i <= idx && i <= m.head+int64(len(m.counts)); i++ {
			m.counts[i%int64(len(m.counts))] = 0
		}
		m.head = idx
	}
	var sum uint64
	for i := m.head - meterBuckets; i < m.head; i++ {
		if i >= 0 {
			sum += m.counts[i%int64(len(m.counts))]
		}
	}
	m.counts[m.head%int64(len(m.counts))]++
	return float64(sum) / meterSpan.Seconds()
}
