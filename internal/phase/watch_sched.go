package phase

import (
	"math"
	"runtime/metrics"
	"time"
)

// The wait rule reads the Go runtime's own record of how long goroutines
// waited to run: /sched/latencies:seconds, a cumulative histogram of the
// time a goroutine spent runnable before it ran. The runtime records it
// for about one transition in eight of each goroutine (gTrackingPeriod),
// so a tick holds a sample of the process's wake-ups, not all of them.
// The watcher keeps the histogram's counts at the tick before and reads
// the tick's distribution from the difference (waitOf).

// minWaitSamples is the fewest runtime samples a tick's wait reading must
// hold for the wait rule to judge it, and for MaxWait to count it. A
// script's iteration gives about a quarter of a sample in the steady
// state (one GET and a sleep: 45 a 250 ms tick for each of 7 agents
// running 100 000 VUs, 59 for 1 000 VUs iterating once a second;
// docs/performance.md), so a minimum of 100 would never judge them. 30
// keeps them judged and leaves out a process that wakes few goroutines
// (an idle watch, a rate of a few arrivals a second), whose tick a single
// wake-up would decide. Below 100 samples the p99 is the tick's largest
// sample: the threshold far above a descheduled thread's wait and the
// Ticks-in-a-row streak keep a single slow wake-up from marking a tick.
const minWaitSamples = 30

// schedReading is the runtime's scheduling readings at one instant:
// buckets and counts are /sched/latencies:seconds (counts[i] the samples
// in [buckets[i], buckets[i+1]), cumulative), runnable the goroutines
// ready to run then (/sched/goroutines/runnable; < 0 unknown). counts nil:
// no reading. The slices belong to the reader and change at its next
// read: the watcher copies what it keeps.
type schedReading struct {
	buckets  []float64
	counts   []uint64
	runnable int64
}

// schedReader reads the runtime's scheduling metrics into buffers it
// reuses: after the first read, a read allocates nothing (the runtime
// writes the histogram's counts into the slice it returned before). One
// reader per watcher, read from its watch loop alone.
type schedReader struct {
	samples [2]metrics.Sample
}

func newSchedReader() *schedReader {
	r := &schedReader{}
	r.samples[0].Name = "/sched/latencies:seconds"
	r.samples[1].Name = "/sched/goroutines/runnable:goroutines"
	return r
}

// read takes the readings now.
func (r *schedReader) read() schedReading {
	metrics.Read(r.samples[:])
	s := schedReading{runnable: -1}
	if v := r.samples[0].Value; v.Kind() == metrics.KindFloat64Histogram {
		h := v.Float64Histogram()
		s.buckets, s.counts = h.Buckets, h.Counts
	}
	if v := r.samples[1].Value; v.Kind() == metrics.KindUint64 {
		s.runnable = int64(v.Uint64())
	}
	return s
}

// waitDist is a tick's runnable-wait distribution.
type waitDist struct {
	// n is the runtime's samples in the tick.
	n uint64
	// p99 is the lower edge of the bucket that holds the tick's 99th
	// percentile sample (the ⌈0.99 n⌉th smallest): a floor, since the
	// percentile lies in that bucket, at most a bucket's width (about a
	// fifth, the runtime's buckets grow by 2^¼) below it. A floor keeps
	// the rule from firing on a bucket's width of rounding.
	p99 time.Duration
	// mean weighs each bucket's samples by its midpoint (the +Inf
	// bucket's by its lower edge, the one below 0 by 0).
	mean time.Duration
}

// waitOf is the distribution of the samples counted between two
// cumulative readings of one histogram (prev before cur, both over
// buckets). A count that went down (it never should) counts nothing.
func waitOf(buckets []float64, prev, cur []uint64) waitDist {
	var d waitDist
	if len(cur) != len(prev) || len(buckets) != len(cur)+1 {
		return d
	}
	var sum float64
	for i := range cur {
		if cur[i] <= prev[i] {
			continue
		}
		n := cur[i] - prev[i]
		d.n += n
		lo, hi := edge(buckets[i]), edge(buckets[i+1])
		if math.IsInf(buckets[i+1], 1) {
			hi = lo
		}
		sum += float64(n) * (lo + hi) / 2
	}
	if d.n == 0 {
		return d
	}
	d.mean = seconds(sum / float64(d.n))
	rank := uint64(math.Ceil(0.99 * float64(d.n)))
	var seen uint64
	for i := range cur {
		if cur[i] > prev[i] {
			seen += cur[i] - prev[i]
		}
		if seen >= rank {
			d.p99 = seconds(edge(buckets[i]))
			break
		}
	}
	return d
}

// edge is a bucket boundary as a wait: no wait is negative, so the
// lowest bucket's -Inf is 0.
func edge(b float64) float64 { return max(b, 0) }

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// noteSched keeps r's histogram counts as the tick's start for the next
// one, in the watcher's own buffer (the reading's is the reader's).
func (w *watcher) noteSched(r schedReading) {
	if r.counts == nil {
		w.schedPrev, w.schedBuckets = w.schedPrev[:0], nil
		return
	}
	w.schedPrev = append(w.schedPrev[:0], r.counts...)
	w.schedBuckets = r.buckets
}
