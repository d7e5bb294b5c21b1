package agent

import (
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The histograms are the report's (internal/report): microseconds from
// 1 µs to one hour, three significant digits. A value merged from an agent
// lands in the same bucket it would have in one process's histogram.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// newHist is the agents' histogram: sparse (only the buckets it filled), so
// that recording, encoding, decoding and replaying cost what the tick's
// latencies fill, not the 22 000 buckets a dense one spans.
func newHist() *hdr.PackedHistogram { return hdr.NewPacked(histLowest, histHighest, histDigits) }

// Latencies is an agent's latency recorder (engine.LatencyRecorder): it
// collects the latencies of a tick and hands them over as an encoded
// histogram delta.
type Latencies struct {
	mu    sync.Mutex
	h     *hdr.PackedHistogram
	spare *hdr.PackedHistogram // Take's, swapped with h
}

// NewLatencies returns an empty recorder.
func NewLatencies() *Latencies { return &Latencies{h: newHist(), spare: newHist()} }

// Record counts one attempt's latency.
func (l *Latencies) Record(d time.Duration) {
	v := min(max(int64(d/time.Microsecond), 0), histHighest)
	l.mu.Lock()
	_ = l.h.RecordValue(v)
	l.mu.Unlock()
}

// Take returns the latencies recorded since the last Take, encoded, and
// starts over; nil when there were none. One goroutine calls it.
func (l *Latencies) Take() ([]byte, error) {
	l.mu.Lock()
	h := l.h
	l.h, l.spare = l.spare, h
	l.mu.Unlock()
	defer h.Reset()
	if h.TotalCount() == 0 {
		return nil, nil
	}
	return h.Encode()
}

// decodeHist decodes an agent's histogram delta and checks it is one of
// ours (a foreign geometry would land values in other buckets).
func decodeHist(b []byte) (*hdr.PackedHistogram, error) {
	h, err := hdr.DecodePacked(b)
	if err != nil {
		return nil, err
	}
	if h.LowestTrackableValue() != histLowest || h.HighestTrackableValue() != histHighest || h.SignificantFigures() != histDigits {
		return nil, fmt.Errorf("histogram geometry %d..%d/%d is not throttle's", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
	}
	return h, nil
}

// Recorder is where the controller puts the merged latencies
// (report.Recorder is one).
type Recorder interface{ Record(time.Duration) }

// replay records every latency of h into r at its bucket's value, which
// lands in the same bucket of r's histogram (of the same geometry): the
// merged histogram is exactly the one a single process would have.
func replay(h *hdr.PackedHistogram, r Recorder) {
	for v, n := range h.ForEachBucket {
		d := time.Duration(v) * time.Microsecond
		for range n {
			r.Record(d)
		}
	}
}
