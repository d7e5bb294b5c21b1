package report

import (
	"math"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

// shedRun is a deterministic governed run against a shedding target of
// capacity c: the real governor, driven tick by tick on explicit times, a
// Recorder fed latencies that depend on whether the target is overloaded.
// It stands in for the engine so the report is tested on the windows a real
// run produces.
type shedRun struct {
	limits   governor.Limits
	capacity float64
	tick     time.Duration
	seconds  int
	// capacityAt, when set, changes the capacity over time (a target that
	// dies or recovers).
	capacityAt func(sec int) float64
}

func (s shedRun) run(tb testing.TB) Input {
	tb.Helper()
	var ok, failed float64
	var windows []governor.Window
	rec, err := NewRecorder(s.limits.High)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := governor.New(s.limits,
		governor.CountersFunc(func() (uint64, uint64) { return uint64(ok), uint64(failed) }),
		governor.WithObserver(func(w governor.Window) {
			windows = append(windows, w)
			rec.Observe(w)
		}),
		governor.WithLogger(nil),
		// The simulated target answers within the step and carries nothing
		// over between offers: no settle span, as in internal/sim.
		governor.WithSettle(0),
	)
	if err != nil {
		tb.Fatal(err)
	}
	var offer float64
	step := func(now time.Time) {
		if ask, moved := g.Tick(now); moved {
			g.Confirm(now, governor.Confirmation{Origin: governor.OriginGovernor, Asked: ask, Applied: ask})
			offer = ask
		}
	}
	step(t0)
	ticks := int(time.Duration(s.seconds) * time.Second / s.tick)
	var attempts Attempts
	for i := 1; i <= ticks; i++ {
		now := t0.Add(time.Duration(i) * s.tick)
		c := s.capacity
		if s.capacityAt != nil {
			c = s.capacityAt(int(now.Sub(t0) / time.Second))
		}
		dt := s.tick.Seconds()
		okN := math.Min(offer, c) * dt
		failN := math.Max(0, offer-c) * dt
		// Served requests take 4–6 ms, 1.5 ms more while the target sheds;
		// shed ones fail in 0.3 ms.
		before := uint64(ok)
		ok += okN
		for j := uint64(0); j < uint64(ok)-before; j++ {
			base := 4*time.Millisecond + time.Duration(j%21)*100*time.Microsecond
			if failN > 0.5 { // overloaded
				base += 1500 * time.Microsecond
			}
			rec.Record(base)
		}
		beforeF := uint64(failed)
		failed += failN
		for j := uint64(0); j < uint64(failed)-beforeF; j++ {
			rec.Record(300 * time.Microsecond)
		}
		step(now)
	}
	attempts.OK, attempts.Status5xx = uint64(ok), uint64(failed)
	return Input{
		Settings:   Settings{Limits: s.limits, Tick: s.tick, Governed: true, EarlyBreach: true, Target: "http://127.0.0.1:41234 (built-in shed target: capacity 800 req/s, latency 5ms)"},
		Windows:    windows,
		Start:      t0,
		End:        t0.Add(time.Duration(s.seconds) * time.Second),
		Attempts:   attempts,
		Iterations: Iterations{OK: attempts.OK, Failed: attempts.Failed()},
		Latency:    rec.Summary(),
	}
}

// demoLimits are the limits of the README example: start 50/s, windows of
// 2 s, against a target of 800 req/s.
func demoLimits() governor.Limits {
	l := governor.NewLimits(governor.Rate, 5000)
	l.Start = 50
	l.Window = 2 * time.Second
	return l
}

func demoRun() shedRun {
	return shedRun{limits: demoLimits(), capacity: 800, tick: 500 * time.Millisecond, seconds: 60}
}
