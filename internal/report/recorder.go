package report

import (
	"fmt"
	"math"
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

// DefaultWindowBudget is how many bytes of settled windows' histograms a
// Recorder keeps unless told otherwise (WithWindowBudget): 64 MiB. Settled
// windows are merged by offer (see offerBin), so a phase that holds near
// one level keeps a few dozen histograms however long it runs; one of
// 10 000 attempts spread over 1 ms – 1 s is about 21 kB (a dense histogram
// would take 188 kB).
const DefaultWindowBudget = 64 << 20

// KeepWindows is how many of the newest windows a Recorder (and a phase,
// phase.KeepWindows) holds one by one: 10 000, 14 hours of 5 s windows,
// under 10 MB. Older windows are summed up (Earlier); the timeline file,
// streamed as windows close (Spool), keeps every one.
const KeepWindows = 10_000

// binWidth is the relative width of an offer bin: settled windows whose
// offers lie within 1 % of each other share one histogram.
const binWidth = 0.01

// offerBin is the bin of settled windows an offer belongs to. The windows
// a capacity rests on are chosen by their offer (governor.Steady: within
// ±15 % of the level the phase settled at), so merging the histograms of
// windows at (nearly) one offer loses nothing the report asks of them but
// at the edges of that span, where a bin may straddle it; concurrency
// offers, whole numbers more than 1 % apart below 100, are binned exactly.
func offerBin(offer float64) int {
	if offer <= 0 {
		return math.MinInt32
	}
	return int(math.Floor(math.Log(offer) / math.Log1p(binWidth)))
}

// bin is the merged histogram of the settled windows of one offer bin.
type bin struct {
	hist *hdr.PackedHistogram
	used uint64 // the Recorder's window count when a window last merged in
}

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
	// Offer is the window's offer: its settled latencies are in the
	// Recorder's bin of that offer.
	Offer float64
	// Missed counts the arrivals the generator missed (fell behind the
	// schedule) since the previous window closed (Recorder.SetMissed).
	Missed uint64
}

// Latencies is what a Recorder measured: Report.Build takes it as input.
type Latencies struct {
	// AtCapacity covers the attempts that resolved during the windows the
	// capacity rests on (governor.Steady over the windows the Recorder
	// observed): the latency of the target at its capacity. Build recomputes
	// it over the steady windows of its Input when these Latencies came from
	// Recorder.Summary; Latencies made by hand are taken as they are.
	AtCapacity Latency
	// Overall covers every recorded attempt.
	Overall Latency
	// Windows has one entry per window the Recorder observed, in order:
	// the newest KeepWindows of them.
	Windows []WindowLatency
	// Clamped counts latencies over one hour, recorded as one hour.
	Clamped uint64
	// FirstP50 is the p50 latency of the first window that recorded any
	// (kept when that window is no longer among Windows).
	FirstP50 time.Duration

	recorded bool                         // from Recorder.Summary: bins hold the settled windows' latencies
	bins     map[int]*hdr.PackedHistogram // by offerBin; never modified once handed out
}

// Recorder collects attempt latencies into HDR histograms and attributes
// them to governor windows, so a report can give the latency at the
// capacity level beside the latency overall. Which windows make up the
// capacity level (governor.Steady: the settled windows near the level the
// phase settled at) is known only once the phase is over, so the Recorder
// keeps each settled window's histogram and merges the steady ones when
// asked (Summary, and Build from it).
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
// Memory is bounded: a settled window's histogram is kept sparse (only the
// buckets it filled, at the same three-digit precision), typically 5–20 kB;
// windows that were not settled can never count toward the capacity and
// keep only their summary. Past the budget (DefaultWindowBudget
// unless WithWindowBudget says otherwise) the oldest histograms are
// dropped, and a report built from the Recorder says that its latency at
// capacity covers only the steady windows whose histograms were kept.
//
// It is safe for concurrent use. The zero value is not usable; call
// NewRecorder.
type Recorder struct {
	high    float64
	budget  int     // bytes of window histograms kept at most
	shards  []shard // a power of two of them
	shift   uint    // 64 − log2(len(shards)): picks a shard from a hash
	clamped atomic.Uint64

	mu       sync.Mutex // guards everything below; never held by Record
	overall  *hdr.Histogram
	scratch  *hdr.Histogram
	spare    []*hdr.Histogram
	observed []governor.Window // the newest observed windows, in order (KeepWindows)
	windows  []WindowLatency   // one per observed window
	n        uint64            // windows observed in all
	first    time.Duration     // FirstP50; negative until a window recorded any
	bins     map[int]*bin      // settled windows' latencies by offerBin
	kept     int               // bytes held by bins, ≤ budget
	sink     func(governor.Window, WindowLatency)
	missed   func() uint64 // the phase's missed arrivals so far (SetMissed); nil: none
	lastMiss uint64        // missed when the previous window closed
}

// A RecorderOption changes a Recorder's defaults.
type RecorderOption func(*Recorder)

// WithWindowBudget bounds the bytes of per-window histograms the Recorder
// keeps (DefaultWindowBudget by default). It must not be negative; 0 keeps
// none, so a report has no latency at capacity.
func WithWindowBudget(bytes int) RecorderOption {
	return func(r *Recorder) { r.budget = bytes }
}

// WithWindowSink hands every observed window with its latency to sink, in
// order, as it closes (Spool.Add streams them to the timeline file).
func WithWindowSink(sink func(governor.Window, WindowLatency)) RecorderOption {
	return func(r *Recorder) { r.sink = sink }
}

// SetWindowSink is WithWindowSink on a Recorder made already (a script's
// scenarios make theirs when the script loads): the windows observed from
// now on go to sink too.
func (r *Recorder) SetWindowSink(sink func(governor.Window, WindowLatency)) {
	r.mu.Lock()
	r.sink = sink
	r.mu.Unlock()
}

// SetMissed gives the Recorder the phase's count of missed arrivals so far
// (engine.Counts.Missed): each window closed from now on is given those
// missed since the previous one closed (WindowLatency.Missed, the
// timeline's missed column), as its latencies are.
func (r *Recorder) SetMissed(missed func() uint64) {
	r.mu.Lock()
	r.missed = missed
	r.mu.Unlock()
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
func NewRecorder(high float64, opts ...RecorderOption) (*Recorder, error) {
	if !(high > 0 && high < 1) {
		return nil, fmt.Errorf("high must be in (0, 1), got %v", high)
	}
	n, bits := 4, uint(2)
	for n < 2*runtime.GOMAXPROCS(0) && n < 32 {
		n, bits = n*2, bits+1
	}
	r := &Recorder{
		high:    high,
		budget:  DefaultWindowBudget,
		shards:  make([]shard, n),
		shift:   64 - bits,
		overall: newHist(),
		scratch: newHist(),
		first:   -1,
		bins:    map[int]*bin{},
	}
	for _, o := range opts {
		o(r)
	}
	if r.budget < 0 {
		return nil, fmt.Errorf("window histogram budget must be >= 0 bytes, got %d", r.budget)
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
	r.scratch.Reset()
	r.drain(r.scratch)
	r.overall.Merge(r.scratch)
	r.n++
	wl := WindowLatency{Start: w.Start, End: w.End, Offer: w.Offer, Latency: summarize(r.scratch)}
	if r.missed != nil {
		m := r.missed()
		wl.Missed, r.lastMiss = m-min(m, r.lastMiss), max(m, r.lastMiss)
	}
	if r.first < 0 && wl.Count > 0 {
		r.first = wl.P50
	}
	if governor.Settled(w, r.high) && r.scratch.TotalCount() > 0 {
		// Only a settled window can turn out steady; keep its latencies,
		// merged with those of the settled windows at its offer, until the
		// phase's level is known.
		k := offerBin(w.Offer)
		b := r.bins[k]
		if b == nil {
			b = &bin{hist: hdr.NewPacked(histLowest, histHighest, histDigits)}
			r.bins[k] = b
		} else {
			r.kept -= b.hist.GetMemorySize()
		}
		b.hist.MergeFrom(r.scratch)
		b.hist.Compact()
		b.used = r.n
		r.kept += b.hist.GetMemorySize()
		r.evict()
	}
	r.observed = append(r.observed, w)
	r.windows = append(r.windows, wl)
	if len(r.observed) >= KeepWindows+KeepWindows/4 {
		// Forget the oldest windows a quarter at a time: memory stays
		// bounded and the copy is paid once every KeepWindows/4 windows.
		drop := len(r.observed) - KeepWindows
		r.observed = append(r.observed[:0], r.observed[drop:]...)
		r.windows = append(r.windows[:0], r.windows[drop:]...)
	}
	sink := r.sink
	r.mu.Unlock()
	if sink != nil {
		sink(w, wl)
	}
}

// evict drops the least recently merged bins while the bins hold more
// than the budget. Callers hold r.mu.
func (r *Recorder) evict() {
	for r.kept > r.budget {
		var oldest *bin
		k := 0
		for key, b := range r.bins {
			if oldest == nil || b.used < oldest.used {
				oldest, k = b, key
			}
		}
		if oldest == nil {
			return
		}
		r.kept -= oldest.hist.GetMemorySize()
		delete(r.bins, k)
	}
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

// Summary returns everything recorded so far, with the latency at capacity
// over the windows governor.Steady picks from the windows observed so far
// (the newest KeepWindows). Attempts recorded after the last observed
// window count in Overall only. It does not disturb the recorder, which
// may go on recording.
func (r *Recorder) Summary() Latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scratch.Reset()
	r.scratch.Merge(r.overall)
	r.peek(r.scratch)
	bins := make(map[int]*hdr.PackedHistogram, len(r.bins))
	for k, b := range r.bins {
		bins[k] = b.hist.Clone()
	}
	l := Latencies{
		Overall:  summarize(r.scratch),
		Windows:  append([]WindowLatency(nil), r.windows...),
		Clamped:  r.clamped.Load(),
		FirstP50: max(r.first, 0),
		recorded: true,
		bins:     bins,
	}
	l.AtCapacity, _ = steadyLatency(r.observed, governor.Steady(r.observed, r.high), bins)
	return l
}

// steadyLatency merges the latencies of the windows ws[i], i in steady,
// from the bins of their offers (each bin once). covered counts the steady
// windows whose bin was kept.
func steadyLatency(ws []governor.Window, steady []int, bins map[int]*hdr.PackedHistogram) (l Latency, covered int) {
	if len(steady) == 0 {
		return Latency{}, 0
	}
	h := newHist()
	merged := map[int]bool{}
	for _, i := range steady {
		k := offerBin(ws[i].Offer)
		p := bins[k]
		if p == nil {
			continue
		}
		covered++
		if !merged[k] {
			merged[k] = true
			p.MergeInto(h)
		}
	}
	return summarize(h), covered
}

// span identifies a window by its start and end.
func span(start, end time.Time) [2]int64 { return [2]int64{start.UnixNano(), end.UnixNano()} }

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
