package report

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/throttlekit/throttle/governor"
)

// The histograms count microseconds from 1 µs to one hour with three
// significant digits: a latency is known to within 0.1 %. Shorter latencies
// count as 0 µs; longer ones count as one hour and are reported as clamped.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// Latency summarizes the latencies of a set of attempts. The zero value
// means no attempt was recorded.
type Latency struct {
	Count                               int64
	Min, Mean, P50, P90, P99, P999, Max time.Duration
}

// WindowLatency is the latency of the attempts that resolved during one
// governor window.
type WindowLatency struct {
	Start, End time.Time
	Latency
}

// Latencies is what a Recorder measured: Report.Build takes it as input.
type Latencies struct {
	// AtCapacity covers the attempts that resolved during settled windows
	// (governor.Settled): the latency of the target at its capacity.
	AtCapacity Latency
	// Overall covers every recorded attempt.
	Overall Latency
	// Windows has one entry per window the Recorder observed, in order.
	Windows []WindowLatency
	// Clamped counts latencies over one hour, recorded as one hour.
	Clamped uint64
}

// Recorder collects attempt latencies into HDR histograms and attributes
// them to governor windows, so a report can give the latency at the
// capacity level (over the settled windows) beside the latency overall.
//
// The engine calls Record once per resolved attempt from any goroutine, and
// Observe with every closed window, in order, from the governor's observer
// (governor.WithObserver). Record is the hot path: it takes one of several
// sharded locks, chosen by a hash of the latency, and records into that
// shard's histogram;
// Observe swaps the shards' histograms for empty ones and merges what they
// held into the closing window. An attempt belongs to the window during
// which it was recorded; the few that resolve between a window's close and
// the next window's start (while the new offer is being applied) count with
// the next window.
//
// It is safe for concurrent use. The zero value is not usable; call
// NewRecorder.
type Recorder struct {
	high    float64
	shards  []shard // a power of two of them
	shift   uint    // 64 − log2(len(shards)): picks a shard from a hash
	clamped atomic.Uint64

	mu         sync.Mutex // guards everything below; never held by Record
	overall    *hdr.Histogram
	atCapacity *hdr.Histogram
	scratch    *hdr.Histogram
	spare      []*hdr.Histogram
	windows    []WindowLatency
}

// shard is one lock and histogram, padded to its own cache line so that
// recorders on different cores do not slow each other down.
type shard struct {
	mu sync.Mutex
	h  *hdr.Histogram
	_  [48]byte
}

// NewRecorder returns a recorder for a phase whose failure bound is high
// (the same Limits.High the governor uses: it decides which windows are
// settled).
func NewRecorder(high float64) (*Recorder, error) {
	if !(high > 0 && high < 1) {
		return nil, fmt.Errorf("report: high must be in (0, 1), got %v", high)
	}
	n, bits := 4, uint(2)
	for n < 2*runtime.GOMAXPROCS(0) && n < 32 {
		n, bits = n*2, bits+1
	}
	r := &Recorder{
		high:       high,
		shards:     make([]shard, n),
		shift:      64 - bits,
		overall:    newHist(),
		atCapacity: newHist(),
		scratch:    newHist(),
	}
	for i := range r.shards {
		r.shards[i].h = newHist()
	}
	return r, nil
}

// Record counts one resolved attempt's latency (measured from its intended
// start). A negative latency counts as 0.
func (r *Recorder) Record(latency time.Duration) {
	v := int64(latency / time.Microsecond)
	if v < 0 {
		v = 0
	} else if v > histHighest {
		v = histHighest
		r.clamped.Add(1)
	}
	// The shard comes from the latency itself, Fibonacci-hashed: latencies
	// of concurrent attempts differ in their low bits, so concurrent callers
	// mostly take different locks, without the cost of a random number. A
	// coarse clock only makes collisions likelier, never a result wrong.
	s := &r.shards[(uint64(latency)*0x9E3779B97F4A7C15)>>r.shift]
	s.mu.Lock()
	_ = s.h.RecordValue(v) // in range by construction
	s.mu.Unlock()
}

// Observe closes a window: the attempts recorded since the previous window
// closed are attributed to w. Call it from the governor's observer with
// every window, in order.
func (r *Recorder) Observe(w governor.Window) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scratch.Reset()
	r.drain(r.scratch)
	r.overall.Merge(r.scratch)
	if governor.Settled(w, r.high) {
		r.atCapacity.Merge(r.scratch)
	}
	r.windows = append(r.windows, WindowLatency{Start: w.Start, End: w.End, Latency: summarize(r.scratch)})
}

// drain moves what the shards hold into dst, leaving them empty. Each shard
// is locked only long enough to swap its histogram. Callers hold r.mu.
func (r *Recorder) drain(dst *hdr.Histogram) {
	for i := range r.shards {
		fresh := r.takeSpare()
		s := &r.shards[i]
		s.mu.Lock()
		full := s.h
		s.h = fresh
		s.mu.Unlock()
		dst.Merge(full)
		full.Reset()
		r.spare = append(r.spare, full)
	}
}

func (r *Recorder) takeSpare() *hdr.Histogram {
	if n := len(r.spare); n > 0 {
		h := r.spare[n-1]
		r.spare = r.spare[:n-1]
		return h
	}
	return newHist()
}

// peek merges what the shards hold into dst without draining them.
// Callers hold r.mu.
func (r *Recorder) peek(dst *hdr.Histogram) {
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		dst.Merge(s.h)
		s.mu.Unlock()
	}
}

// Recent summarizes the attempts recorded since the last window closed, for
// a live view. It costs a merge of every shard: call it a few times a second
// at most.
func (r *Recorder) Recent() Latency {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scratch.Reset()
	r.peek(r.scratch)
	return summarize(r.scratch)
}

// Summary returns everything recorded so far. Attempts recorded after the
// last observed window count in Overall only. It does not disturb the
// recorder, which may go on recording.
func (r *Recorder) Summary() Latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scratch.Reset()
	r.scratch.Merge(r.overall)
	r.peek(r.scratch)
	return Latencies{
		AtCapacity: summarize(r.atCapacity),
		Overall:    summarize(r.scratch),
		Windows:    append([]WindowLatency(nil), r.windows...),
		Clamped:    r.clamped.Load(),
	}
}

func summarize(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	q := h.ValueAtPercentiles([]float64{50, 90, 99, 99.9})
	return Latency{
		Count: h.TotalCount(),
		Min:   us(h.Min()),
		Mean:  time.Duration(h.Mean() * float64(time.Microsecond)),
		P50:   us(q[50]),
		P90:   us(q[90]),
		P99:   us(q[99]),
		P999:  us(q[99.9]),
		Max:   us(h.Max()),
	}
}
