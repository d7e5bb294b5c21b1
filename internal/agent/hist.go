package agent

import (
	"bytes"
	"encoding/binary"
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
//
// The encoding is throttle's own, not hdrhistogram's Encode: that one
// makes a new zlib writer at BestCompression per call (about 800 KB of
// garbage and 2 ms of CPU for a tick's few hundred buckets), every tick on
// every agent, where an agent of 100 000 sleeping VUs' run makes about
// 4 MB of its own garbage a second and each GC cycle marks the VUs.
func (l *Latencies) Take() ([]byte, error) {
	l.mu.Lock()
	h := l.h
	l.h, l.spare = l.spare, h
	l.mu.Unlock()
	defer h.Reset()
	if h.TotalCount() == 0 {
		return nil, nil
	}
	return encodeHist(h), nil
}

// histFormat opens an encoded delta: a format number, the geometry as
// three uvarints (lowest, highest, significant digits), then one pair of
// uvarints per filled bucket in ascending value order: the value's
// distance from the previous bucket's (from 0 for the first) and the
// count. A tick's delta is a few hundred bytes.
const histFormat = 1

// encodeHist encodes h's filled buckets in histFormat.
func encodeHist(h *hdr.PackedHistogram) []byte {
	b := make([]byte, 0, 16+int(h.Populated())*6)
	b = append(b, histFormat)
	b = binary.AppendUvarint(b, uint64(histLowest))
	b = binary.AppendUvarint(b, uint64(histHighest))
	b = binary.AppendUvarint(b, uint64(histDigits))
	prev := int64(0)
	for v, n := range h.ForEachBucket {
		b = binary.AppendUvarint(b, uint64(v-prev))
		b = binary.AppendUvarint(b, uint64(n))
		prev = v
	}
	return b
}

// histBucket is one filled bucket of a delta: its value and count.
type histBucket struct{ value, count int64 }

// decodeHist decodes an agent's histogram delta and checks it is one of
// ours: a foreign geometry would land values in other buckets, and a
// value out of range, a bucket out of order or an empty one is not what
// encodeHist writes.
func decodeHist(b []byte) ([]histBucket, error) {
	if len(b) == 0 || b[0] != histFormat {
		return nil, fmt.Errorf("histogram delta is not in format %d", histFormat)
	}
	r := bytes.NewReader(b[1:])
	var geom [3]uint64
	for i := range geom {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("histogram geometry: %w", err)
		}
		geom[i] = v
	}
	if geom != [3]uint64{histLowest, uint64(histHighest), histDigits} {
		return nil, fmt.Errorf("histogram geometry %d..%d/%d is not throttle's", geom[0], geom[1], geom[2])
	}
	var out []histBucket
	prev := int64(0)
	for r.Len() > 0 {
		dv, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("histogram bucket: %w", err)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("histogram bucket: %w", err)
		}
		v := prev + int64(dv)
		if (dv == 0 && len(out) > 0) || dv > uint64(histHighest) || v < histLowest-1 || v > histHighest || n == 0 || n > 1<<40 {
			return nil, fmt.Errorf("histogram bucket %d×%d (after %d) is not one of throttle's", int64(dv), n, prev)
		}
		out = append(out, histBucket{v, int64(n)})
		prev = v
	}
	return out, nil
}

// Recorder is where the controller puts the merged latencies
// (report.Recorder is one).
type Recorder interface{ Record(time.Duration) }

// replay records every latency of h into r at its bucket's value, which
// lands in the same bucket of r's histogram (of the same geometry): the
// merged histogram is exactly the one a single process would have.
func replay(h []histBucket, r Recorder) {
	for _, b := range h {
		d := time.Duration(b.value) * time.Microsecond
		for range b.count {
			r.Record(d)
		}
	}
}
