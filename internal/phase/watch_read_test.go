package phase

import (
	"errors"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
)

// reads is one tick's answers read with the kernel's stamps: n of them,
// mean read delay each.
type reads struct {
	n    uint64
	mean time.Duration
}

// feedReads runs one-second ticks through w, each adding a tick's answers
// to the cumulative read-delay counters, and returns the status after each.
// It starts from counters that already hold answers, as a reading mid-run
// does: only the tick's own count.
func feedReads(w *watcher, ticks []reads) []GeneratorStatus {
	r := watchReading{at: time.Unix(1000, 0), readSum: time.Hour, readN: 1000}
	w.observe(r)
	var out []GeneratorStatus
	for _, tk := range ticks {
		r.at = r.at.Add(time.Second)
		r.readN += tk.n
		r.readSum += time.Duration(tk.n) * tk.mean
		out = append(out, w.observe(r))
	}
	return out
}

var (
	readCalm  = reads{n: 4000, mean: 20 * time.Microsecond}
	readLate  = reads{n: 4000, mean: 7 * time.Millisecond}
	readFew   = reads{n: minReadAnswers - 1, mean: 50 * time.Millisecond}
	readEnuf  = reads{n: minReadAnswers, mean: 5 * time.Millisecond}
	readBelow = reads{n: 4000, mean: 5*time.Millisecond - time.Microsecond}
)

func TestReadRule(t *testing.T) {
	for _, c := range []struct {
		name  string
		rate  bool
		cfg   WatchConfig
		ticks []reads
		sat   []bool
	}{
		{"calm", false, WatchConfig{}, []reads{readCalm, readCalm, readCalm}, []bool{false, false, false}},
		{"late two ticks in a row, concurrency mode", false, WatchConfig{}, []reads{readCalm, readLate, readLate, readCalm}, []bool{false, false, true, false}},
		{"late two ticks in a row, rate mode", true, WatchConfig{}, []reads{readLate, readLate}, []bool{false, true}},
		{"late ticks apart", false, WatchConfig{}, []reads{readLate, readCalm, readLate, readCalm}, []bool{false, false, false, false}},
		{"three in a row with Ticks 3", false, WatchConfig{Ticks: 3}, []reads{readLate, readLate, readLate}, []bool{false, false, true}},
		{"too few answers", false, WatchConfig{Ticks: 1}, []reads{readFew, readFew}, []bool{false, false}},
		{"just enough answers at the default", false, WatchConfig{Ticks: 1}, []reads{readEnuf}, []bool{true}},
		{"just below the default", false, WatchConfig{Ticks: 1}, []reads{readBelow}, []bool{false}},
		{"a tick with too few answers breaks the streak", false, WatchConfig{}, []reads{readLate, readFew, readLate, readLate}, []bool{false, false, false, true}},
		{"no answers: no reading", false, WatchConfig{Ticks: 1}, []reads{{}, {}}, []bool{false, false}},
		{"off when negative", false, WatchConfig{Ticks: 1, Read: -1}, []reads{readLate, readLate}, []bool{false, false}},
		{"a higher threshold", false, WatchConfig{Ticks: 1, Read: 10 * time.Millisecond}, []reads{readLate, {n: 100, mean: 10 * time.Millisecond}}, []bool{false, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWatcher(c.rate, c.cfg)
			st := feedReads(w, c.ticks)
			for i, s := range st {
				if s.Saturated != c.sat[i] || (s.Saturated && s.Signal != "read") {
					t.Errorf("tick %d: %+v, want saturated %v by read", i, s, c.sat[i])
				}
			}
		})
	}
}

// A tick's status carries its mean read delay over the tick's answers
// alone, judged or not; the summary's MaxReadDelay is the largest over
// the judged ticks only, and its signals count the read rule's ticks.
// The wait rule comes first when both hold.
func TestReadReadings(t *testing.T) {
	w := newWatcher(false, WatchConfig{})
	st := feedReads(w, []reads{readCalm, readLate, readLate, readFew})
	if s := st[0]; s.ReadDelay != 20*time.Microsecond || s.ReadAnswers != 4000 {
		t.Errorf("calm tick: %+v, want 20µs over 4000 answers (the tick's, not the run's)", s)
	}
	if s := st[3]; s.ReadDelay != 50*time.Millisecond || s.ReadAnswers != minReadAnswers-1 || s.Saturated {
		t.Errorf("a tick of too few answers reads, unjudged: %+v", s)
	}
	sum := w.summary()
	if sum.MaxReadDelay != 7*time.Millisecond || sum.Signals["read"] != 1 || sum.SaturatedTicks != 1 {
		t.Errorf("summary %+v, want max read delay 7ms (not the unjudged 50ms), one read tick", sum)
	}

	// Both rules hold: wait, first in the switch, names the tick.
	w = newWatcher(false, WatchConfig{Ticks: 1, Wait: 50 * time.Millisecond})
	rt := &fakeRuntime{counts: make([]uint64, nTestBuckets), runnable: 7}
	r := watchReading{at: time.Unix(1000, 0), sched: rt.read()}
	w.observe(r)
	rt.add(starved)
	r.at, r.sched, r.readN, r.readSum = r.at.Add(time.Second), rt.read(), 100, 100*readLate.mean
	if s := w.observe(r); !s.Saturated || s.Signal != "wait" || s.ReadDelay != readLate.mean {
		t.Errorf("wait and read both hold: %+v, want wait named", s)
	}
}

// The phase reads its counters' read delay at each watch tick (reading):
// answers that waited in the kernel saturate it by the read rule, and its
// status and summary carry the reading.
func TestPhaseReadsReadDelay(t *testing.T) {
	c := &cleanCounters{}
	clk := clock.NewFake(time.Unix(0, 0))
	p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, 2), Clock: clk, Counters: c,
		NewWorker: func(int) (Worker, error) { return nil, errors.New("no workers here") },
		Watch:     WatchConfig{CPU: -1, Wait: -1, Ticks: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.watch.observe(p.reading())
	clk.Advance(time.Second)
	c.readN.Add(200)
	c.readSum.Add(int64(200 * 6 * time.Millisecond))
	if st := p.watch.observe(p.reading()); !st.Saturated || st.Signal != "read" || st.ReadDelay != 6*time.Millisecond || st.ReadAnswers != 200 {
		t.Errorf("status %+v, want saturated by read at 6ms over 200 answers", st)
	}
	if g := p.Generator(); g.MaxReadDelay != 6*time.Millisecond || g.Signals["read"] != 1 {
		t.Errorf("summary %+v", g)
	}
}
