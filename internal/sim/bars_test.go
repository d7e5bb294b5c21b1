package sim

import (
	"math"
	"testing"

	"github.com/throttlekit/throttle/governor"
)

// These tests assert the bars DESIGN.md §5 derives from the seed's rules
// (issue 2, "Deterministic simulations"), against throttle's real governor.
// A window is one governor decision: with start = 1 and MinAttempts = 20 the
// first windows, at offers 1 and 2, last 20 s and 10 s, because a 5 s window
// at those offers holds fewer than 20 attempts and keeps collecting. That is
// the governor's real behaviour; it changes how long the opening windows
// last, not how many decisions the bars allow.

// slowStartBound is ceil(log2(c/start)): the clean doublings from start to c.
func slowStartBound(c, start float64) int { return int(math.Ceil(math.Log2(c / start))) }

// runGovernor runs the governor with the §5 setting against target and
// fails the test on a run error.
func runGovernor(t *testing.T, l governor.Limits, target Target, opts ...Option) Result {
	t.Helper()
	r, err := Run(NewGovernor(l), target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRobustTargetReachesCeilingInLog2CleanWindows(t *testing.T) {
	l := Setting()
	want := slowStartBound(l.Ceiling, l.Start) // 14
	r := runGovernor(t, l, Robust(), UntilWindows(want+5))
	offers := r.Offers()
	n, ok := ReachedAt(offers, l.Ceiling)
	if !ok || n != want {
		t.Fatalf("ceiling %v reached after %d windows (reached=%v), want exactly %d; offers %v", l.Ceiling, n, ok, want, offers)
	}
	for i, x := range offers[n:] {
		if x != l.Ceiling {
			t.Fatalf("offer left the ceiling after it was reached: offers[%d] = %v", n+i, x)
		}
	}
	if r.Failed != 0 {
		t.Fatalf("robust target: %d failed attempts, want 0", r.Failed)
	}
	for i, w := range r.Windows[:n] {
		if w.Decision.Signal != governor.SignalSlowStart || w.Frac != 0 {
			t.Fatalf("window %d: signal %v frac %v, want a clean slow-start window", i, w.Decision.Signal, w.Frac)
		}
	}
}

// checkSettles runs the governor against model(c) for every integer c in
// [lo, hi] and asserts that the offer enters SettleBand(c) within
// slowStartBound(c) + extra windows and stays there for margin windows past
// that deadline. The whole sweep runs also under -short: it takes about two
// seconds with -race.
func checkSettles(t *testing.T, name string, model func(c float64) Target, lo, hi, extra, margin int) {
	t.Helper()
	l := Setting()
	worst, worstC := math.MinInt, 0
	for ci := lo; ci <= hi; ci++ {
		c := float64(ci)
		limit := slowStartBound(c, l.Start) + extra
		r := runGovernor(t, l, model(c), UntilWindows(limit+margin))
		n, ok := EnteredAndStayed(r.Offers(), SettleBand(c, l.High))
		if !ok || n > limit {
			t.Fatalf("%s c=%v: offer settled in [%.4g, %.4g] after %d windows (settled=%v), want <= %d; offers %v",
				name, c, 0.95*c, c/(1-l.High), n, ok, limit, r.Offers())
		}
		if slack := n - limit; slack > worst {
			worst, worstC = slack, ci
		}
	}
	t.Logf("%s: c = %d…%d, tightest: c=%d settled %d windows before its deadline", name, lo, hi, worstC, -worst)
}

func TestShedSweepSettlesWithinLog2Plus6(t *testing.T) {
	checkSettles(t, "shed", Shed, 20, 9000, 6, 30)
}

func TestCollapseSweepSettlesWithinLog2Plus10(t *testing.T) {
	checkSettles(t, "collapse", Collapse, 50, 9000, 10, 30)
}
