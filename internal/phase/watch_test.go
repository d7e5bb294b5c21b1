package phase

import (
	"testing"
	"time"
)

// tick is one injected watch reading, as deltas over the tick before it.
type tick struct {
	started, arrivals uint64
	lag               time.Duration // mean lag of the tick's arrivals
	cpu               time.Duration // CPU time used in the tick; < 0 unknown
	offer             float64
	dropped           uint64
	// loopWall and loopIdle: the event loops' wall time in the tick and
	// the part of it they waited (both zero: no loops).
	loopWall, loopIdle time.Duration
}

// feed runs ticks of one second each through a watcher of two cores and
// returns the status after each.
func feed(w *watcher, ticks []tick) []GeneratorStatus {
	w.cores = 2
	t0 := time.Unix(1000, 0)
	r := watchReading{at: t0, offer: ticks[0].offer}
	w.observe(r)
	var out []GeneratorStatus
	for _, tk := range ticks {
		r.at = r.at.Add(time.Second)
		r.started += tk.started
		r.arrivals += tk.arrivals
		r.lagSum += tk.lag * time.Duration(tk.arrivals)
		r.lagged += tk.arrivals
		if tk.cpu < 0 || r.cpu < 0 {
			r.cpu = -1
		} else {
			r.cpu += tk.cpu
		}
		r.offer = tk.offer
		r.dropped += tk.dropped
		r.loopWall += tk.loopWall
		r.loopIdle += tk.loopIdle
		out = append(out, w.observe(r))
	}
	return out
}

func TestWatchRules(t *testing.T) {
	healthy := tick{started: 1000, arrivals: 1000, lag: 100 * time.Microsecond, cpu: 300 * time.Millisecond, offer: 1000}
	for _, c := range []struct {
		name   string
		rate   bool
		tick   tick
		signal string
	}{
		{"healthy", true, healthy, ""},
		{"cpu at 0.9 of two cores", true, tick{started: 1000, arrivals: 1000, cpu: 1800 * time.Millisecond, offer: 1000}, "cpu"},
		{"cpu just below", true, tick{started: 1000, arrivals: 1000, cpu: 1790 * time.Millisecond, offer: 1000}, ""},
		{"lag", true, tick{started: 1000, arrivals: 1000, lag: 6 * time.Millisecond, cpu: 500 * time.Millisecond, offer: 1000}, "lag"},
		{"lag is no signal in concurrency mode", false, tick{started: 1000, arrivals: 1000, lag: 6 * time.Millisecond, offer: 10}, ""},
		{"schedule shortfall", true, tick{started: 700, arrivals: 700, lag: time.Millisecond, cpu: time.Second, offer: 1000}, "schedule"},
		{"dropped arrivals are the target's, not a shortfall", true, tick{started: 200, arrivals: 1000, lag: time.Millisecond, offer: 1000}, ""},
		{"too few arrivals to judge", true, tick{started: 10, arrivals: 10, offer: 40}, ""},
		{"unknown CPU", true, tick{started: 1000, arrivals: 1000, cpu: -1, offer: 1000}, ""},
		// A loop that cannot keep up drops instead of lagging: its
		// answers sit unread while it works, its slots stay taken.
		{"drops while the loop never waits", true, tick{started: 600, arrivals: 1000, dropped: 400, lag: 200 * time.Microsecond, cpu: 900 * time.Millisecond, offer: 1000, loopWall: time.Second}, "drop"},
		{"drops while the loop waits a fifth", true, tick{started: 600, arrivals: 1000, dropped: 400, offer: 1000, loopWall: time.Second, loopIdle: 200 * time.Millisecond}, "drop"},
		{"drops on two loops, both busy", true, tick{started: 600, arrivals: 1000, dropped: 400, offer: 1000, loopWall: 2 * time.Second, loopIdle: 150 * time.Millisecond}, "drop"},
		// A slow target: the slots are taken waiting for its answers,
		// arrivals are dropped alike, but the loop sleeps.
		{"drops while the loop waits for the target", true, tick{started: 50, arrivals: 1000, dropped: 950, offer: 1000, loopWall: time.Second, loopIdle: 980 * time.Millisecond}, ""},
		{"drops while the loop waits a quarter", true, tick{started: 600, arrivals: 1000, dropped: 400, offer: 1000, loopWall: time.Second, loopIdle: 250 * time.Millisecond}, ""},
		{"a busy loop that drops nothing keeps up", true, tick{started: 1000, arrivals: 1000, offer: 1000, loopWall: time.Second}, ""},
		{"a busy loop that drops under 1 %", true, tick{started: 995, arrivals: 1000, dropped: 5, offer: 1000, loopWall: time.Second}, ""},
		{"a busy loop that drops 1 %", true, tick{started: 990, arrivals: 1000, dropped: 10, offer: 1000, loopWall: time.Second}, "drop"},
		// Goroutine workers give no busy reading: a starved pool lags.
		{"drops without loops", true, tick{started: 600, arrivals: 1000, dropped: 400, lag: time.Millisecond, offer: 1000}, ""},
		{"drop is no signal in concurrency mode", false, tick{started: 600, arrivals: 1000, dropped: 400, offer: 10, loopWall: time.Second}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWatcher(c.rate, WatchConfig{})
			st := feed(w, []tick{healthy, c.tick, c.tick, healthy})
			if got := st[2]; got.Signal != c.signal || got.Saturated != (c.signal != "") {
				t.Errorf("status %+v, want signal %q", got, c.signal)
			}
			if st[0].Saturated || st[1].Saturated || st[3].Saturated {
				t.Errorf("a healthy tick, or one rule-tick alone, is not saturated: %+v", st)
			}
		})
	}
}

// A tick whose offer changed is not judged by the schedule rule: its
// arrivals were asked for at two rates.
func TestWatchOfferChange(t *testing.T) {
	w := newWatcher(true, WatchConfig{})
	st := feed(w, []tick{
		{started: 100, arrivals: 100, offer: 100},
		{started: 150, arrivals: 150, offer: 200}, // raised at the tick's end
		{started: 200, arrivals: 200, offer: 200},
	})
	for i, s := range st {
		if s.Saturated {
			t.Errorf("tick %d: %+v", i, s)
		}
	}
}

// The summary counts saturated ticks by signal, and its rate is the attempt
// rate over the saturated ticks alone.
func TestWatchSummary(t *testing.T) {
	w := newWatcher(true, WatchConfig{})
	st := feed(w, []tick{
		{started: 1000, arrivals: 1000, offer: 1000},
		{started: 5000, arrivals: 5000, cpu: 1900 * time.Millisecond, offer: 8000}, // one tick: not yet
		{started: 7000, arrivals: 7000, cpu: 1950 * time.Millisecond, offer: 8000},
		{started: 2000, arrivals: 2000, lag: 8 * time.Millisecond, offer: 2000},
		{started: 2000, arrivals: 2000, offer: 2000},
	})
	if st[1].Saturated || !st[2].Saturated || !st[3].Saturated || st[4].Saturated {
		t.Fatalf("statuses %+v", st)
	}
	if st[2].Signal != "cpu" || st[3].Signal != "lag" {
		t.Errorf("signals %q %q", st[2].Signal, st[3].Signal)
	}
	s := w.summary()
	if s.Ticks != 5 || s.SaturatedTicks != 2 || s.Signals["cpu"] != 1 || s.Signals["lag"] != 1 {
		t.Errorf("summary %+v", s)
	}
	if want := (7000.0 + 2000) / 2; s.Rate != want {
		t.Errorf("rate %v, want %v", s.Rate, want)
	}
	if s.MaxLag != 8*time.Millisecond || s.PeakCPU != 1.95 {
		t.Errorf("max lag %v, peak CPU %v", s.MaxLag, s.PeakCPU)
	}
	if w.status() != st[4] || w.saturatedRate() != s.Rate {
		t.Errorf("status %+v rate %v", w.status(), w.saturatedRate())
	}
}

// With Ticks 1 a single tick decides.
func TestWatchOneTick(t *testing.T) {
	w := newWatcher(true, WatchConfig{Ticks: 1})
	st := feed(w, []tick{{started: 500, arrivals: 500, lag: 9 * time.Millisecond, offer: 500}})
	if !st[0].Saturated || st[0].Signal != "lag" {
		t.Errorf("%+v", st[0])
	}
}

// Turning a rule off (a negative threshold) silences it.
func TestWatchRuleOff(t *testing.T) {
	w := newWatcher(true, WatchConfig{CPU: -1, Lag: -1, Shortfall: -1, Drop: -1})
	st := feed(w, []tick{{started: 10, arrivals: 10, lag: time.Second, cpu: 2 * time.Second, offer: 1000, dropped: 900, loopWall: time.Second}})
	if st[0].Saturated {
		t.Errorf("every rule off, yet %+v", st[0])
	}
}

// The drop rule's readings: the tick's dropped share and the loops' busy
// share, -1 without loops; Busy -1 turns the rule off alone.
func TestWatchDropReadings(t *testing.T) {
	w := newWatcher(true, WatchConfig{Ticks: 1})
	st := feed(w, []tick{
		{started: 750, arrivals: 1000, dropped: 250, offer: 1000, loopWall: 2 * time.Second, loopIdle: 600 * time.Millisecond},
		{started: 750, arrivals: 1000, dropped: 250, offer: 1000},
	})
	if st[0].Dropped != 0.25 || st[0].Busy != 0.7 || st[0].Saturated {
		t.Errorf("busy 0.7 of two loops' seconds, a quarter dropped: %+v, want unsaturated (busy < 0.8)", st[0])
	}
	if st[1].Busy != -1 || st[1].Dropped != 0.25 {
		t.Errorf("no loops: %+v, want busy -1", st[1])
	}
	w = newWatcher(true, WatchConfig{Ticks: 1, Busy: -1})
	if st := feed(w, []tick{{started: 0, arrivals: 1000, dropped: 1000, offer: 1000, loopWall: time.Second}}); st[0].Saturated {
		t.Errorf("Busy -1 leaves the drop rule off: %+v", st[0])
	}
}

// A loop's busy reading, on explicit instants: the wall time runs from
// its start, a wait under way counts idle up to the reading, and both
// readings only grow, through the wait's end and the loop's end.
func TestLaneBusy(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var b laneBusy
	if w, i := b.read(at(5)); w != 0 || i != 0 {
		t.Fatalf("not started: %v %v", w, i)
	}
	b.begin(at(0))
	b.mu.Lock()
	b.wait(true, at(100))
	b.wait(true, at(150)) // a second "about to wait" keeps the first instant
	b.mu.Unlock()
	check := func(now int, wall, idle time.Duration) {
		t.Helper()
		if w, i := b.read(at(now)); w != wall || i != idle {
			t.Errorf("at %d ms: wall %v idle %v, want %v %v", now, w, i, wall, idle)
		}
	}
	check(300, 300*time.Millisecond, 200*time.Millisecond)
	b.mu.Lock()
	b.wait(false, at(400))
	b.wait(false, at(450)) // awake twice: nothing more
	b.mu.Unlock()
	check(500, 500*time.Millisecond, 300*time.Millisecond)
	b.mu.Lock()
	b.wait(true, at(600))
	b.mu.Unlock()
	b.finish(at(700)) // ends the wait under way, and the wall time
	check(900, 700*time.Millisecond, 400*time.Millisecond)
}
