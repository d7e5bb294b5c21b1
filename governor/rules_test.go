package governor

import (
	"math"
	"testing"
)

func rateLimits() Limits {
	l := NewLimits(Rate, 10000)
	l.Low = 0.01
	return l
}

func concLimits() Limits {
	l := NewLimits(Concurrency, 100)
	l.Low = 0.01
	return l
}

// One row per rule of the seed, with the boundaries where each rule bites.
func TestDecideRules(t *testing.T) {
	rate, conc := rateLimits(), concLimits()
	cases := []struct {
		name                   string
		l                      Limits
		frac, current, lastBad float64
		want                   Decision
	}{
		// 1. back-off: clamp(1 − frac, 0.25, 0.9), remembering current.
		{"breach just above high trims by 0.9", rate, 0.0500001, 1000, 0, Decision{KindLower, SignalBackoff, 1000, 900, 1000}},
		{"frac exactly 0.1: 1-frac = 0.9, the clamp's edge", rate, 0.1, 1000, 0, Decision{KindLower, SignalBackoff, 1000, 900, 1000}},
		{"frac 0.3 scales by 0.7", rate, 0.3, 1000, 0, Decision{KindLower, SignalBackoff, 1000, 700, 1000}},
		{"frac exactly 0.75: 1-frac = 0.25, the other edge", rate, 0.75, 1000, 0, Decision{KindLower, SignalBackoff, 1000, 250, 1000}},
		{"total failure collapses to a quarter", rate, 1, 1000, 0, Decision{KindLower, SignalBackoff, 1000, 250, 1000}},
		{"back-off overwrites older memory", rate, 0.5, 400, 900, Decision{KindLower, SignalBackoff, 400, 200, 400}},
		{"back-off never goes below the floor", rate, 1, 3, 0, Decision{KindLower, SignalBackoff, 3, 1, 3}},
		{"back-off at the floor holds, naming the floor, and still remembers", rate, 1, 1, 0, Decision{KindHold, SignalAtFloor, 1, 1, 1}},
		// 2. dead band: low < frac <= high.
		{"frac exactly high is the dead band, not a breach", rate, 0.05, 1000, 0, Decision{KindHold, SignalDeadBand, 1000, 1000, 0}},
		{"just above low is the dead band", rate, 0.0100001, 1000, 800, Decision{KindHold, SignalDeadBand, 1000, 1000, 800}},
		// 3. clean: frac <= low.
		{"frac exactly low is clean", rate, 0.01, 1000, 0, Decision{KindRaise, SignalSlowStart, 1000, 2000, 0}},
		{"slow start doubles", rate, 0, 37.5, 0, Decision{KindRaise, SignalSlowStart, 37.5, 75, 0}},
		{"slow start stops at the ceiling", rate, 0, 6000, 0, Decision{KindRaise, SignalSlowStart, 6000, 10000, 0}},
		{"slow start at the ceiling holds, naming it", rate, 0, 10000, 0, Decision{KindHold, SignalAtCeiling, 10000, 10000, 0}},
		{"safe climb ×1.5", rate, 0, 100, 1000, Decision{KindRaise, SignalSafeClimb, 100, 150, 1000}},
		{"safe climb stops at 75 % of last-bad", rate, 0, 600, 1000, Decision{KindRaise, SignalSafeClimb, 600, 750, 1000}},
		{"safe climb stops at the ceiling", rate, 0, 9000, 20000, Decision{KindRaise, SignalSafeClimb, 9000, 10000, 20000}},
		{"current exactly 0.75 × last-bad probes", rate, 0, 750, 1000, Decision{KindRaise, SignalProbe, 750, 770, 1000}},
		{"probe steps 2 % of last-bad", rate, 0.005, 1000, 1000, Decision{KindRaise, SignalProbe, 1000, 1020, 1000}},
		{"probe steps at least one unit", rate, 0, 30, 20, Decision{KindRaise, SignalProbe, 30, 31, 20}},
		{"probe stops at the ceiling", rate, 0, 9990, 9000, Decision{KindRaise, SignalProbe, 9990, 10000, 9000}},
		{"probe at the ceiling holds", rate, 0, 10000, 9000, Decision{KindHold, SignalAtCeiling, 10000, 10000, 9000}},
		// concurrency mode: whole numbers, increases up, decreases down.
		{"concurrency back-off rounds down", conc, 0.2, 7, 0, Decision{KindLower, SignalBackoff, 7, 5, 7}},
		{"concurrency back-off never below floor after rounding", conc, 1, 3, 0, Decision{KindLower, SignalBackoff, 3, 1, 3}},
		{"concurrency safe climb rounds up", conc, 0, 5, 20, Decision{KindRaise, SignalSafeClimb, 5, 8, 20}},
		{"concurrency safe-zone edge rounds up", conc, 0, 2, 3, Decision{KindRaise, SignalSafeClimb, 2, 3, 3}},
		{"concurrency probe rounds up", conc, 0, 60, 70, Decision{KindRaise, SignalProbe, 60, 62, 70}},
		{"concurrency slow start clamps to ceiling", conc, 0, 64, 0, Decision{KindRaise, SignalSlowStart, 64, 100, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.frac, c.current, c.lastBad, c.l)
			if math.Abs(got.Offer-c.want.Offer) < 1e-9 {
				got.Offer = c.want.Offer // float noise from ×0.9 and friends
			}
			if got != c.want {
				t.Fatalf("Decide(%v, %v, %v) = %+v, want %+v", c.frac, c.current, c.lastBad, got, c.want)
			}
		})
	}
}

func TestMemoryClearStep(t *testing.T) {
	streak := 0
	var clears bool
	for i := 1; i < MemoryClearStreak; i++ {
		streak, clears = MemoryClearStep(streak, true)
		if streak != i || clears {
			t.Fatalf("window %d: streak %d clears %v, want %d false", i, streak, clears, i)
		}
	}
	streak, clears = MemoryClearStep(streak, true)
	if streak != 0 || !clears {
		t.Fatalf("window %d: streak %d clears %v, want 0 true", MemoryClearStreak, streak, clears)
	}
	// Any non-qualifying window resets, even one short of clearing.
	streak, _ = MemoryClearStep(MemoryClearStreak-1, false)
	if streak != 0 {
		t.Fatalf("non-qualifying window left streak %d", streak)
	}
}

func TestSignalAndKindNames(t *testing.T) {
	want := map[Signal]string{
		SignalSlowStart: "slow-start", SignalSafeClimb: "safe-climb", SignalProbe: "probe",
		SignalBackoff: "back-off", SignalDeadBand: "dead-band", SignalNoEvidence: "no-evidence",
		SignalAtCeiling: "at-ceiling", SignalAtFloor: "at-floor", SignalMemoryCleared: "memory-cleared",
		SignalGeneratorSaturated: "generator-saturated", SignalOutage: "outage", SignalLatency: "latency",
		SignalNone: "none", Signal(200): "unknown",
	}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("Signal(%d).String() = %q, want %q", s, s.String(), name)
		}
	}
	if KindRaise.String() != "raise" || KindLower.String() != "lower" || KindHold.String() != "hold" {
		t.Error("kind names")
	}
}
