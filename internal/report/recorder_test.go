package report

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// window returns a closed window of n attempts at offer, decided by signal.
func window(i int, offer float64, ok, failed uint64, signal governor.Signal) governor.Window {
	w := governor.Window{
		Start:    t0.Add(time.Duration(i) * time.Second),
		End:      t0.Add(time.Duration(i+1) * time.Second),
		Offer:    offer,
		OK:       ok,
		Failed:   failed,
		Decision: governor.Decision{Signal: signal, From: offer, Offer: offer},
	}
	if ok+failed > 0 {
		w.Frac = float64(failed) / float64(ok+failed)
	}
	return w
}

// near reports whether got is within HDR's three-digit precision of want.
func near(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= float64(want)/1000+float64(time.Microsecond)
}

func TestNewRecorderRejectsBadHigh(t *testing.T) {
	for _, high := range []float64{0, 1, -0.1, math.NaN()} {
		if _, err := NewRecorder(high); err == nil {
			t.Errorf("NewRecorder(%v) accepted", high)
		}
	}
}

// Latency at capacity comes only from the settled windows; overall from
// everything, including attempts after the last window.
func TestRecorderAttributesWindows(t *testing.T) {
	rec, err := NewRecorder(0.05)
	if err != nil {
		t.Fatal(err)
	}
	record := func(d time.Duration, n int) {
		for i := 0; i < n; i++ {
			rec.Record(d)
		}
	}
	record(2*time.Millisecond, 100) // slow start: searching, not settled
	rec.Observe(window(0, 100, 100, 0, governor.SignalSlowStart))
	record(50*time.Millisecond, 100) // saturated back-off
	rec.Observe(window(1, 200, 50, 50, governor.SignalBackoff))
	record(10*time.Millisecond, 300) // settled probe
	rec.Observe(window(2, 150, 300, 0, governor.SignalProbe))
	record(12*time.Millisecond, 100) // settled dead band
	rec.Observe(window(3, 152, 98, 2, governor.SignalDeadBand))
	record(time.Second, 1) // after the last window

	if r := rec.Recent(); r.Count != 1 || !near(r.Max, time.Second) {
		t.Fatalf("Recent() = %+v, want the one attempt since the last window", r)
	}
	s := rec.Summary()
	if s.AtCapacity.Count != 400 || !near(s.AtCapacity.P50, 10*time.Millisecond) ||
		!near(s.AtCapacity.P90, 12*time.Millisecond) || !near(s.AtCapacity.Max, 12*time.Millisecond) {
		t.Errorf("AtCapacity = %+v, want 400 attempts of 10–12 ms", s.AtCapacity)
	}
	if s.Overall.Count != 601 || !near(s.Overall.Min, 2*time.Millisecond) || !near(s.Overall.Max, time.Second) {
		t.Errorf("Overall = %+v, want all 601 attempts", s.Overall)
	}
	if len(s.Windows) != 4 || s.Windows[1].Count != 100 || !near(s.Windows[1].P50, 50*time.Millisecond) ||
		!s.Windows[2].Start.Equal(t0.Add(2*time.Second)) {
		t.Errorf("Windows = %+v", s.Windows)
	}
	// Summary does not drain: the recorder keeps counting.
	if again := rec.Summary(); again.Overall.Count != 601 {
		t.Errorf("second Summary counts %d", again.Overall.Count)
	}
}

func TestRecorderClampsAndFloors(t *testing.T) {
	rec, _ := NewRecorder(0.05)
	rec.Record(-time.Second)
	rec.Record(2 * time.Hour)
	s := rec.Summary()
	if s.Clamped != 1 || s.Overall.Count != 2 || s.Overall.Min != 0 || !near(s.Overall.Max, time.Hour) {
		t.Errorf("Summary = %+v", s)
	}
}

// Records from many goroutines while windows close: nothing is lost or
// counted twice.
func TestRecorderConcurrent(t *testing.T) {
	rec, _ := NewRecorder(0.05)
	const writers, each = 8, 5000
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				rec.Record(time.Duration(i%100) * time.Millisecond)
			}
		}()
	}
	stop := make(chan struct{})
	observed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				observed <- n
				return
			default:
				rec.Observe(window(n, 10, 10, 0, governor.SignalProbe))
				_ = rec.Recent()
				n++
			}
		}
	}()
	wg.Wait()
	close(stop)
	n := <-observed
	s := rec.Summary()
	if s.Overall.Count != writers*each {
		t.Fatalf("Overall.Count = %d, want %d", s.Overall.Count, writers*each)
	}
	var inWindows int64
	for _, w := range s.Windows {
		inWindows += w.Count
	}
	if len(s.Windows) != n || inWindows != s.AtCapacity.Count || inWindows > writers*each {
		t.Fatalf("%d windows holding %d, at capacity %d", len(s.Windows), inWindows, s.AtCapacity.Count)
	}
}

// BenchmarkRecord is the engine's hot path: one call per attempt, from
// every worker at once, each worker seeing its own latencies.
func BenchmarkRecord(b *testing.B) {
	rec, _ := NewRecorder(0.05)
	var worker atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(worker.Add(1)) * 104729 * time.Nanosecond
		for pb.Next() {
			d += 7919 * time.Microsecond
			rec.Record(d % time.Second)
		}
	})
}

// BenchmarkRecordOneLock is the design Record avoids: one histogram behind
// one mutex. Compare it with BenchmarkRecord at -cpu 1,2,4,8.
func BenchmarkRecordOneLock(b *testing.B) {
	var mu sync.Mutex
	h := newHist()
	var worker atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(worker.Add(1)) * 104729 * time.Nanosecond
		for pb.Next() {
			d += 7919 * time.Microsecond
			mu.Lock()
			_ = h.RecordValue(int64((d % time.Second) / time.Microsecond))
			mu.Unlock()
		}
	})
}

// BenchmarkObserve is the cost of closing a window holding 10 000 attempts
// spread over 1 ms – 1 s.
func BenchmarkObserve(b *testing.B) {
	rec, _ := NewRecorder(0.05)
	w := window(0, 10, 10, 0, governor.SignalProbe)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := 0; j < 10000; j++ {
			rec.Record(time.Duration(j) * 100 * time.Microsecond)
		}
		b.StartTimer()
		rec.Observe(w)
	}
}

// BenchmarkRecent is the live view's cost: a summary of the attempts since
// the last window (10 000 of them), a few times a second.
func BenchmarkRecent(b *testing.B) {
	rec, _ := NewRecorder(0.05)
	for j := 0; j < 10000; j++ {
		rec.Record(time.Duration(j) * 100 * time.Microsecond)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = rec.Recent()
	}
}

// BenchmarkSummary is the end-of-run cost of the latency at capacity: 1 000
// steady windows of 1 600 attempts over 2–20 ms merged from their kept
// histograms.
func BenchmarkSummary(b *testing.B) {
	rec, _ := NewRecorder(0.05)
	for i := 0; i < 1000; i++ {
		for j := 0; j < 1600; j++ {
			rec.Record(time.Duration(2000+(j*7919)%18000) * time.Microsecond)
		}
		rec.Observe(window(i, 800, 1600, 0, governor.SignalProbe))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s := rec.Summary(); s.AtCapacity.Count != 1000*1600 {
			b.Fatalf("at capacity counts %d", s.AtCapacity.Count)
		}
	}
}
