package phase

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// testBuckets is a fake runtime's wait histogram: the runtime's shape
// (below 0, finite edges, +Inf), coarser.
var testBuckets = []float64{math.Inf(-1), 0, 0.001, 0.002, 0.005, 0.010, 0.020, 0.050, 0.100, math.Inf(1)}

const (
	bNeg = iota // [-Inf, 0)
	b0          // [0, 1 ms)
	b1          // [1, 2 ms)
	b2          // [2, 5 ms)
	b5          // [5, 10 ms)
	b10         // [10, 20 ms)
	b20         // [20, 50 ms)
	b50         // [50, 100 ms)
	b100        // [100 ms, +Inf)
	nTestBuckets
)

// counts is a histogram's counts with n[i] samples in bucket i.
func counts(n map[int]uint64) []uint64 {
	c := make([]uint64, nTestBuckets)
	for i, v := range n {
		c[i] = v
	}
	return c
}

func TestWaitOf(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, c := range []struct {
		name       string
		prev, cur  map[int]uint64
		n          uint64
		p99, mean  time.Duration
		wantNoRead bool
	}{
		{name: "no samples", prev: map[int]uint64{b1: 5}, cur: map[int]uint64{b1: 5}, n: 0},
		{name: "one bucket", cur: map[int]uint64{b1: 100}, n: 100, p99: ms(1), mean: ms(1.5)},
		// The 99th of 100 is in [0, 1 ms): the one slow sample is the 100th.
		{name: "one slow sample in 100", cur: map[int]uint64{b0: 99, b50: 1}, n: 100, p99: 0, mean: ms((99*0.5 + 75) / 100)},
		{name: "two slow samples in 100", cur: map[int]uint64{b0: 98, b50: 2}, n: 100, p99: ms(50), mean: ms((98*0.5 + 2*75) / 100)},
		// Under 100 samples the 99th percentile is the largest.
		{name: "ten samples: the largest", cur: map[int]uint64{b0: 9, b10: 1}, n: 10, p99: ms(10), mean: ms((9*0.5 + 15) / 10)},
		// The rank lands on a bucket's last sample: that bucket, not the next.
		{name: "rank at a boundary", cur: map[int]uint64{b2: 198, b20: 2}, n: 200, p99: ms(2), mean: ms((198*3.5 + 2*35) / 200)},
		{name: "rank one past a boundary", cur: map[int]uint64{b2: 197, b20: 3}, n: 200, p99: ms(20), mean: ms((197*3.5 + 3*35) / 200)},
		// The +Inf bucket's samples weigh at its lower edge.
		{name: "+Inf bucket", cur: map[int]uint64{b100: 100}, n: 100, p99: ms(100), mean: ms(100)},
		{name: "below zero", cur: map[int]uint64{bNeg: 100}, n: 100, p99: 0, mean: 0},
		// Cumulative counts: only the tick's samples.
		{name: "deltas", prev: map[int]uint64{b0: 1000, b50: 500}, cur: map[int]uint64{b0: 1099, b50: 500, b100: 1}, n: 100, p99: 0, mean: ms((99*0.5 + 100) / 100)},
		{name: "deltas across buckets", prev: map[int]uint64{b0: 1000, b5: 7, b100: 3}, cur: map[int]uint64{b0: 1010, b5: 87, b100: 13}, n: 100, p99: ms(100), mean: ms((10*0.5 + 80*7.5 + 10*100) / 100)},
		{name: "a count that went down counts nothing", prev: map[int]uint64{b0: 50, b1: 9}, cur: map[int]uint64{b0: 150, b1: 3}, n: 100, p99: 0, mean: ms(0.5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := waitOf(testBuckets, counts(c.prev), counts(c.cur))
			if d.n != c.n || d.p99 != c.p99 || absDur(d.mean-c.mean) > time.Nanosecond {
				t.Errorf("n %d p99 %v mean %v, want %d %v %v", d.n, d.p99, d.mean, c.n, c.p99, c.mean)
			}
		})
	}
	if d := waitOf(testBuckets, counts(nil), make([]uint64, nTestBuckets-1)); d != (waitDist{}) {
		t.Errorf("readings of different shapes: %+v, want none", d)
	}
	if d := waitOf(testBuckets[1:], counts(nil), counts(map[int]uint64{b0: 100})); d != (waitDist{}) {
		t.Errorf("buckets that do not bound the counts: %+v, want none", d)
	}
}

func absDur(d time.Duration) time.Duration { return max(d, -d) }

// fakeRuntime is a runtime whose wait histogram grows by what a test adds
// and whose reads, as the runtime's do, return the same slice each time.
type fakeRuntime struct {
	counts   []uint64
	runnable int64
}

func (f *fakeRuntime) read() schedReading {
	return schedReading{buckets: testBuckets, counts: f.counts, runnable: f.runnable}
}

func (f *fakeRuntime) add(n map[int]uint64) {
	for i, v := range n {
		f.counts[i] += v
	}
}

// feedWaits runs one-second ticks through w, each adding a tick's samples
// to the fake runtime, and returns the status after each.
func feedWaits(w *watcher, ticks []map[int]uint64) []GeneratorStatus {
	rt := &fakeRuntime{counts: make([]uint64, nTestBuckets), runnable: 7}
	at := time.Unix(1000, 0)
	w.observe(watchReading{at: at, sched: rt.read()})
	var out []GeneratorStatus
	for _, tk := range ticks {
		at = at.Add(time.Second)
		rt.add(tk)
		out = append(out, w.observe(watchReading{at: at, sched: rt.read()}))
	}
	return out
}

var (
	calm    = map[int]uint64{b0: 190, b1: 10}          // p99 1 ms
	starved = map[int]uint64{b0: 150, b50: 40}         // p99 50 ms
	few     = map[int]uint64{b100: minWaitSamples - 1} // p99 100 ms, one sample short
	enough  = map[int]uint64{b100: minWaitSamples}     // p99 100 ms, just enough
	edge50  = map[int]uint64{b0: 98, b50: 1, b20: 1}   // p99 20 ms: the 99th is in [20, 50)
)

func TestWaitRule(t *testing.T) {
	for _, c := range []struct {
		name  string
		rate  bool
		cfg   WatchConfig
		ticks []map[int]uint64
		sat   []bool
	}{
		{"calm", false, WatchConfig{}, []map[int]uint64{calm, calm, calm}, []bool{false, false, false}},
		{"starved two ticks in a row, concurrency mode", false, WatchConfig{}, []map[int]uint64{calm, starved, starved, calm}, []bool{false, false, true, false}},
		{"starved two ticks in a row, rate mode", true, WatchConfig{}, []map[int]uint64{starved, starved}, []bool{false, true}},
		{"starved ticks apart", false, WatchConfig{}, []map[int]uint64{starved, calm, starved, calm}, []bool{false, false, false, false}},
		{"three in a row with Ticks 3", false, WatchConfig{Ticks: 3}, []map[int]uint64{starved, starved, starved}, []bool{false, false, true}},
		{"one tick with Ticks 1", false, WatchConfig{Ticks: 1}, []map[int]uint64{starved}, []bool{true}},
		{"too few samples", false, WatchConfig{Ticks: 1}, []map[int]uint64{few, few}, []bool{false, false}},
		{"just enough samples", false, WatchConfig{Ticks: 1}, []map[int]uint64{enough}, []bool{true}},
		{"a short tick breaks the streak", false, WatchConfig{}, []map[int]uint64{starved, few, starved, enough}, []bool{false, false, false, true}},
		{"off when negative", false, WatchConfig{Ticks: 1, Wait: -1}, []map[int]uint64{starved, starved}, []bool{false, false}},
		{"a lower threshold", false, WatchConfig{Ticks: 1, Wait: 20 * time.Millisecond}, []map[int]uint64{edge50, calm}, []bool{true, false}},
		{"at the threshold", false, WatchConfig{Ticks: 1, Wait: 50 * time.Millisecond}, []map[int]uint64{starved}, []bool{true}},
		{"just below it", false, WatchConfig{Ticks: 1, Wait: 51 * time.Millisecond}, []map[int]uint64{starved}, []bool{false}},
		{"no samples", false, WatchConfig{Ticks: 1}, []map[int]uint64{nil, nil}, []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			if cfg.Wait == 0 {
				cfg.Wait = 50 * time.Millisecond // the tests' own, whatever the default
			}
			w := newWatcher(c.rate, cfg)
			st := feedWaits(w, c.ticks)
			for i, s := range st {
				if s.Saturated != c.sat[i] || (s.Saturated && s.Signal != "wait") {
					t.Errorf("tick %d: %+v, want saturated %v by wait", i, s, c.sat[i])
				}
			}
		})
	}
}

// A tick's status carries its wait reading, judged or not; the summary's
// MaxWait is the largest over the judged ticks only, and its signals count
// the wait rule's ticks. The cpu rule comes first when both hold.
func TestWaitReadings(t *testing.T) {
	w := newWatcher(false, WatchConfig{Wait: 50 * time.Millisecond})
	st := feedWaits(w, []map[int]uint64{calm, starved, starved, few})
	if s := st[0]; s.Wait != time.Millisecond || s.WaitSamples != 200 || absDur(s.WaitMean-550*time.Microsecond) > time.Nanosecond || s.Runnable != 7 {
		t.Errorf("calm tick: %+v", s)
	}
	if s := st[3]; s.Wait != 100*time.Millisecond || s.WaitSamples != minWaitSamples-1 || s.Saturated {
		t.Errorf("a tick one sample short reads its p99 but is not judged: %+v", s)
	}
	g := w.summary()
	if g.MaxWait != 50*time.Millisecond || g.SaturatedTicks != 1 || g.Signals["wait"] != 1 {
		t.Errorf("summary %+v: want max wait 50ms (the short tick's 100ms not judged), one wait tick", g)
	}

	w = newWatcher(false, WatchConfig{Wait: 50 * time.Millisecond, Ticks: 1})
	w.cores = 2
	rt := &fakeRuntime{counts: make([]uint64, nTestBuckets)}
	t0 := time.Unix(1000, 0)
	w.observe(watchReading{at: t0, sched: rt.read()})
	rt.add(starved)
	if s := w.observe(watchReading{at: t0.Add(time.Second), cpu: 1900 * time.Millisecond, sched: rt.read()}); s.Signal != "cpu" {
		t.Errorf("cpu and wait both hold: %q, want cpu first", s.Signal)
	}

	// A reading without the runtime's histogram: no wait figure, runnable unknown.
	w = newWatcher(false, WatchConfig{})
	w.observe(watchReading{at: t0})
	if s := w.observe(watchReading{at: t0.Add(time.Second)}); s.WaitSamples != 0 || s.Runnable != -1 {
		t.Errorf("no histogram: %+v", s)
	}
}

// A reading that comes too soon is dropped (watch_cpu.go), and the tick
// runs on: its samples count in the tick that ends at the next reading,
// taken against the counts of the last reading judged, though the
// runtime's slice changed in place in between.
func TestWaitDroppedReading(t *testing.T) {
	w := newWatcher(false, WatchConfig{Ticks: 1, Wait: 50 * time.Millisecond})
	rt := &fakeRuntime{counts: make([]uint64, nTestBuckets)}
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	w.observe(watchReading{at: ms(0), sched: rt.read()})
	rt.add(map[int]uint64{b0: 160})
	w.observe(watchReading{at: ms(250), sched: rt.read()})
	rt.add(map[int]uint64{b50: 30})
	if s := w.observe(watchReading{at: ms(260), sched: rt.read()}); s.WaitSamples != 160 {
		t.Fatalf("the dropped reading changed the status: %+v", s)
	}
	rt.add(map[int]uint64{b0: 150})
	s := w.observe(watchReading{at: ms(500), sched: rt.read()})
	if s.WaitSamples != 180 || s.Wait != 50*time.Millisecond || !s.Saturated {
		t.Errorf("the tick 250–500 ms: %+v, want 180 samples, p99 50ms, saturated", s)
	}
}

// The runtime's own reading: a flood of goroutines, each spinning on the
// CPU for 10 ms, released together on two Ps, waits its turn, and the
// runtime's samples of that wait reach the histogram. Each wait grows on a
// slower machine, so only a floor is asserted.
func TestSchedReaderFlood(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const flood, spin = 200, 10 * time.Millisecond // 2 s of CPU
	r := newSchedReader()
	var (
		wg      sync.WaitGroup
		ready   atomic.Int32
		release = make(chan struct{})
	)
	for range flood {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Add(1)
			<-release
			for start := time.Now(); time.Since(start) < spin; {
			}
		}()
	}
	// Every goroutine waits at release before the first reading: their
	// start-up is not in the tick.
	testwait.Until(t, testwait.Deadline, "the flood to wait at its start", func() bool {
		return ready.Load() == flood
	})
	before := r.read()
	if before.counts == nil || before.runnable < 0 {
		t.Fatalf("no reading from the runtime: %+v", before)
	}
	prev := append([]uint64(nil), before.counts...)
	close(release)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	testwait.Receive(t, done, "the flood to finish")
	after := r.read()
	d := waitOf(after.buckets, prev, after.counts)
	t.Logf("flood of %d × %v on 2 Ps: %d samples, p99 %v, mean %v", flood, spin, d.n, d.p99, d.mean)
	if d.n < 5 || d.p99 < 5*time.Millisecond {
		t.Errorf("%d samples, p99 %v: want the flood's waits, at least 5ms", d.n, d.p99)
	}
}

// A watch tick's runtime reading and its judging allocate nothing once
// the buffers are made: the runtime writes into the histogram it returned
// before, and the watcher copies into its own.
func TestWatchTickAllocs(t *testing.T) {
	r := newSchedReader()
	w := newWatcher(false, WatchConfig{})
	at := time.Unix(1000, 0)
	tick := func() {
		at = at.Add(time.Second)
		w.observe(watchReading{at: at, sched: r.read()})
	}
	tick()
	tick()
	if n := testing.AllocsPerRun(50, tick); n != 0 {
		t.Errorf("%v allocations a tick, want 0", n)
	}
}
