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
	w := newWatcher(true, WatchConfig{CPU: -1, Lag: -1, Shortfall: -1})
	st := feed(w, []tick{{started: 10, arrivals: 10, lag: time.Second, cpu: 2 * time.Second, offer: 1000}})
	if st[0].Saturated {
		t.Errorf("every rule off, yet %+v", st[0])
	}
}
