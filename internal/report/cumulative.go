package report

import "time"

// Cumulative reads the latencies recorded so far as a cumulative histogram,
// for a live exporter (a Prometheus scrape): it sets counts[i] to how many
// recorded latencies were at most bounds[i] and returns how many were
// recorded in all and their sum. bounds must ascend and counts be as long;
// latencies above the last bound count in total only.
//
// It reads the histograms Record already fills, so an exporter adds nothing
// to the hot path. A latency counts at a bound when the low end of its HDR
// bucket is at or below it (a latency exactly on a bound counts there), and
// the sum is the histogram's mean times its count: both are exact to the
// recorder's three significant digits (0.1 %). Successive calls
// never see a count fall. It costs a merge of every shard and a walk of the
// recorded range (about a millisecond): call it once per scrape, not per
// attempt.
func (r *Recorder) Cumulative(bounds []time.Duration, counts []uint64) (total uint64, sum time.Duration) {
	clear(counts)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scratch.Reset()
	r.scratch.Merge(r.overall)
	r.peek(r.scratch)
	n := r.scratch.TotalCount()
	if n == 0 {
		return 0, 0
	}
	i := 0
	for _, bar := range r.scratch.Distribution() {
		if bar.Count == 0 {
			continue
		}
		low := time.Duration(bar.From) * time.Microsecond
		for i < len(bounds) && bounds[i] < low {
			i++
		}
		if i == len(bounds) {
			break
		}
		counts[i] += uint64(bar.Count)
	}
	for j := 1; j < len(counts); j++ {
		counts[j] += counts[j-1]
	}
	mean := r.scratch.Mean() * float64(time.Microsecond)
	return uint64(n), time.Duration(mean * float64(n))
}
