package sim

import (
	"testing"
	"time"
)

// Issue 28: with the defaults (start = floor = 1, 5 s windows, 20 attempts)
// a robust target reaches a 3000/s ceiling within 15 s and without a
// failure: the quick climb doubles on a tick of clean evidence, twelve
// times. The seed's cadence takes 20 s at offer 1 alone.
func TestRobustRateTargetReachesCeilingWithin15s(t *testing.T) {
	t.Parallel()
	l := Setting()
	l.Ceiling = 3000
	r, err := Run(NewGovernor(l), Robust(), For(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n, ok := ReachedAt(r.Offers(), l.Ceiling)
	if at := r.decidedAt(n); !ok || at > 15*time.Second || r.Failed != 0 {
		t.Fatalf("ceiling reached=%v at %v with %d failed, want within 15 s and none; offers %v", ok, at, r.Failed, r.Offers())
	}
	s, err := Run(NewSeedGovernor(l), Robust(), For(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := ReachedAt(s.Offers(), l.Ceiling); ok && s.decidedAt(m) <= 30*time.Second {
		t.Fatalf("the seed's cadence reached the ceiling at %v: the comparison proves nothing", s.decidedAt(m))
	}
	t.Logf("1 → 3000/s: %v with the quick climb (%d windows); the seed's cadence was at %v after 30 s", r.decidedAt(n), n, s.Final)
}
