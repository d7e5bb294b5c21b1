package agent

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
)

// A delta round-trips every bucket, a zero latency and the top of the
// range (2 h, clamped to 1 h: its bucket's value within the 3 digits) included, and costs a few bytes per filled bucket.
func TestHistDeltaRoundTrip(t *testing.T) {
	l := NewLatencies()
	want := map[int64]int64{}
	for _, d := range []time.Duration{0, time.Microsecond, 250 * time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, 2 * time.Second, 2 * time.Hour} {
		l.Record(d)
	}
	b, err := l.Take()
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHist(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range h {
		want[x.value] += x.count
	}
	if len(h) != 6 || want[0] != 1 || want[1] != 1 || want[3000] != 2 || h[5].value < histHighest-histHighest/1000 {
		t.Fatalf("buckets %v", h)
	}
	if len(b) > 64 {
		t.Fatalf("a delta of 6 buckets took %d bytes", len(b))
	}
}

// A delta that is not encodeHist's is refused with a reason, never
// replayed into the merged histogram.
func TestHistDeltaRefusesForeign(t *testing.T) {
	head := func(lo, hi, digits uint64) []byte {
		b := []byte{histFormat}
		for _, v := range []uint64{lo, hi, digits} {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	ours := head(histLowest, uint64(histHighest), histDigits)
	pairs := func(b []byte, p ...uint64) []byte {
		b = append([]byte(nil), b...)
		for _, v := range p {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":            {nil, "format"},
		"hdr's own format": {[]byte{0x1c, 0x84, 0x93, 0x14}, "format"},
		"other geometry":   {head(1, 1000, 2), "not throttle's"},
		"truncated":        {ours[:3], "geometry"},
		"count missing":    {pairs(ours, 10), "bucket"},
		"zero count":       {pairs(ours, 10, 0), "not one of"},
		"same value twice": {pairs(ours, 10, 1, 0, 1), "not one of"},
		"past the range":   {pairs(ours, uint64(histHighest), 1, 1, 1), "not one of"},
	} {
		if _, err := decodeHist(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one naming %q", name, err, c.want)
		}
	}
}

// BenchmarkLatenciesTake is one agent tick: 200 latencies recorded, the
// delta taken (B/op is the garbage a tick leaves).
func BenchmarkLatenciesTake(b *testing.B) {
	l := NewLatencies()
	b.ReportAllocs()
	for b.Loop() {
		for j := range 200 {
			l.Record(time.Duration(j*j+1000) * time.Microsecond)
		}
		if _, err := l.Take(); err != nil {
			b.Fatal(err)
		}
	}
}
