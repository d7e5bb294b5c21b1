package governor

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"
)

// step is one window's input for property tests: a failure fraction.
type scenario struct {
	Limits Limits
	Fracs  []float64
}

// Generate makes valid limits of either mode and a run of window fractions
// mixing clean, dead-band, marginal and total-failure windows.
func (scenario) Generate(r *rand.Rand, size int) reflect.Value {
	mode := Mode(r.Intn(2))
	ceiling := 1 + r.Float64()*20000
	floor := 0.1 + r.Float64()*ceiling/10
	if mode == Concurrency {
		ceiling, floor = math.Ceil(ceiling), math.Ceil(floor)
	}
	start := floor + r.Float64()*(ceiling-floor)
	if mode == Concurrency {
		start = math.Floor(start)
	}
	high := 0.01 + r.Float64()*0.5
	l := NewLimits(mode, ceiling)
	l.Floor, l.Start, l.High, l.Low = floor, start, high, r.Float64()*high*0.99
	n := 1 + r.Intn(200)
	fr := make([]float64, n)
	for i := range fr {
		switch r.Intn(5) {
		case 0:
			fr[i] = 0
		case 1:
			fr[i] = r.Float64() * l.Low
		case 2:
			fr[i] = l.Low + r.Float64()*(l.High-l.Low)
		case 3:
			fr[i] = l.High + r.Float64()*(1-l.High)
		default:
			fr[i] = 1
		}
	}
	return reflect.ValueOf(scenario{l, fr})
}

// walk runs the pure rules over a scenario the way the Governor does and
// calls check after every window.
func walk(s scenario, check func(frac float64, before Decision, streakBefore int, d Decision, streak int, cleared bool) bool) bool {
	cur, lastBad, streak := s.Limits.Start, 0.0, 0
	for _, f := range s.Fracs {
		d := Decide(f, cur, lastBad, s.Limits)
		qualifies := f <= s.Limits.Low && lastBad > 0 && cur >= lastBad
		next, clears := MemoryClearStep(streak, qualifies)
		if clears {
			d.LastBad = 0
		}
		if !check(f, Decision{From: cur, LastBad: lastBad}, streak, d, next, clears) {
			return false
		}
		cur, lastBad, streak = d.Offer, d.LastBad, next
	}
	return true
}

var quickConfig = &quick.Config{MaxCount: 2000}

func TestPropertyOfferStaysWithinLimits(t *testing.T) {
	f := func(s scenario) bool {
		return walk(s, func(_ float64, _ Decision, _ int, d Decision, _ int, _ bool) bool {
			ok := d.Offer >= s.Limits.Floor && d.Offer <= s.Limits.Ceiling
			if s.Limits.Mode == Concurrency {
				ok = ok && d.Offer == math.Trunc(d.Offer)
			}
			return ok
		})
	}
	if err := quick.Check(f, quickConfig); err != nil {
		t.Fatal(err)
	}
}

func TestPropertyBackoffFactorBounded(t *testing.T) {
	f := func(s scenario) bool {
		return walk(s, func(frac float64, before Decision, _ int, d Decision, _ int, _ bool) bool {
			if frac <= s.Limits.High {
				return true
			}
			if d.LastBad != before.From {
				return false // a back-off remembers where it failed
			}
			if d.Offer == s.Limits.Floor {
				return true // clamped by the floor
			}
			ratio := d.Offer / before.From
			if s.Limits.Mode == Concurrency {
				// Before rounding down the factor is in [0.25, 0.9]; after it,
				// the offer is within one unit below.
				raw := before.From * clamp(1-frac, 0.25, 0.9)
				return d.Offer == math.Floor(raw) && raw/before.From >= 0.25-1e-12 && raw/before.From <= 0.9+1e-12
			}
			return ratio >= 0.25-1e-12 && ratio <= 0.9+1e-12
		})
	}
	if err := quick.Check(f, quickConfig); err != nil {
		t.Fatal(err)
	}
}

func TestPropertyNoMultiplicativeClimbPastSafeZone(t *testing.T) {
	f := func(s scenario) bool {
		return walk(s, func(frac float64, before Decision, _ int, d Decision, _ int, _ bool) bool {
			if frac > s.Limits.Low || before.LastBad == 0 || d.Kind != KindRaise {
				return true
			}
			if before.From >= 0.75*before.LastBad {
				// Additive probe: exactly one step of max(1, 2 %), rounded up.
				step := before.From + math.Max(1, 0.02*before.LastBad)
				if s.Limits.Mode == Concurrency {
					step = math.Ceil(step)
				}
				return d.Offer == math.Min(step, s.Limits.Ceiling)
			}
			limit := 0.75 * before.LastBad
			if s.Limits.Mode == Concurrency {
				limit = math.Ceil(limit)
			}
			return d.Offer <= limit
		})
	}
	if err := quick.Check(f, quickConfig); err != nil {
		t.Fatal(err)
	}
}

func TestPropertyStreakAndMemoryClear(t *testing.T) {
	f := func(s scenario) bool {
		run := 0 // consecutive qualifying windows, counted independently
		return walk(s, func(frac float64, before Decision, streakBefore int, _ Decision, streak int, cleared bool) bool {
			qualifies := frac <= s.Limits.Low && before.LastBad > 0 && before.From >= before.LastBad
			if !qualifies {
				run = 0
				return streak == 0 && !cleared
			}
			run++
			if run == MemoryClearStreak {
				run = 0
				return cleared && streak == 0
			}
			return !cleared && streak == streakBefore+1 && streak == run
		})
	}
	if err := quick.Check(f, quickConfig); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecide checks the rules' invariants on arbitrary inputs.
func FuzzDecide(f *testing.F) {
	f.Add(0.0, 100.0, 0.0, 10000.0, 1.0, 0.05, 0.01, false, 0, true)
	f.Add(1.0, 1.0, 1.0, 10.0, 1.0, 0.05, 0.0, true, 2, true)
	f.Add(0.05, 750.0, 1000.0, 10000.0, 1.0, 0.05, 0.01, false, 1, false)
	f.Fuzz(func(t *testing.T, frac, current, lastBad, ceiling, floor, high, low float64, conc bool, streak int, qualifies bool) {
		l := NewLimits(Rate, ceiling)
		if conc {
			l.Mode = Concurrency
		}
		l.Floor, l.Start, l.High, l.Low = floor, floor, high, low
		if l.Validate() != nil || math.IsNaN(frac) || frac < 0 || frac > 1 ||
			math.IsNaN(current) || current < floor || current > ceiling ||
			math.IsNaN(lastBad) || lastBad < 0 || math.IsInf(lastBad, 0) {
			return
		}
		if conc {
			current = math.Floor(current)
			if current < floor {
				return
			}
		}
		d := Decide(frac, current, lastBad, l)
		if d.Offer < l.Floor || d.Offer > l.Ceiling || math.IsNaN(d.Offer) {
			t.Fatalf("offer %v outside [%v, %v]", d.Offer, l.Floor, l.Ceiling)
		}
		if conc && d.Offer != math.Trunc(d.Offer) {
			t.Fatalf("concurrency offer %v not whole", d.Offer)
		}
		switch {
		case d.Kind == KindRaise && d.Offer <= current, d.Kind == KindLower && d.Offer >= current, d.Kind == KindHold && d.Offer != current:
			t.Fatalf("kind %v does not match %v→%v", d.Kind, current, d.Offer)
		}
		if frac > high && d.LastBad != current {
			t.Fatalf("back-off did not remember %v", current)
		}
		if frac <= high && d.LastBad != lastBad {
			t.Fatalf("non-breach changed memory %v→%v", lastBad, d.LastBad)
		}
		if frac > low && d.Kind == KindRaise {
			t.Fatalf("raise on a window that was not clean (frac %v > low %v)", frac, low)
		}
		if streak < 0 || streak >= MemoryClearStreak {
			return
		}
		next, clears := MemoryClearStep(streak, qualifies)
		if !qualifies && (next != 0 || clears) || qualifies && clears != (streak+1 == MemoryClearStreak) {
			t.Fatalf("MemoryClearStep(%d, %v) = %d, %v", streak, qualifies, next, clears)
		}
	})
}
