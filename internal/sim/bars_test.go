package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// These tests assert the bars docs/design.md §5 derives from the seed's rules
// (issue 2, "Deterministic simulations"), against throttle's real governor.
// A window is one governor decision: with start = 1 and MinAttempts = 20 the
// first windows, at offers 1 and 2, last 20 s and 10 s, because a 5 s window
// at those offers holds fewer than 20 attempts and keeps collecting. That is
// the governor's real behaviour; it changes how long the opening windows
// last, not how many decisions the bars allow.

// slowStartBound is ceil(log2(c/start)): the clean doublings from start to c.
func slowStartBound(c, start float64) int { return int(math.Ceil(math.Log2(c / start))) }

// variant is one cadence of the governor the bars are checked for.
type variant struct {
	name string
	new  func(governor.Limits) Controller
}

// The bars hold for the governor as it ships (early breach on) and for the
// seed's exact cadence (early breach off).
var (
	early    = variant{"early breach", func(l governor.Limits) Controller { return NewGovernor(l) }}
	seed     = variant{"seed", func(l governor.Limits) Controller { return NewSeedGovernor(l) }}
	variants = []variant{early, seed}
)

// eachVariant runs f as a subtest for every variant.
func eachVariant(t *testing.T, f func(t *testing.T, v variant)) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) { f(t, v) })
	}
}

// runGovernor runs the governor with the §5 setting against target and
// fails the test on a run error.
func runGovernor(t *testing.T, v variant, l governor.Limits, target Target, opts ...Option) Result {
	t.Helper()
	r, err := Run(v.new(l), target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRobustTargetReachesCeilingInLog2CleanWindows(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) {
		l := Setting()
		want := slowStartBound(l.Ceiling, l.Start) // 14
		r := runGovernor(t, v, l, Robust(), UntilWindows(want+5))
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
	})
}

// checkSettles runs the governor against model(c) for every integer c in
// [lo, hi] and asserts that the offer enters SettleBand(c) within
// slowStartBound(c) + extra windows and stays there for margin windows past
// that deadline, twice: in the bar's own model (fractional attempts, see
// fractional), for every c; and on whole attempts, where a c that misses
// must show the window that tipped it (see roundingFlip). The whole sweep
// runs also under -short: it takes a few seconds with -race.
func checkSettles(t *testing.T, v variant, name string, model func(c float64) Target, lo, hi, extra, margin int) {
	t.Helper()
	for _, k := range []float64{1000, 1} {
		worst, worstC, flips := math.MinInt, 0, 0
		for ci := lo; ci <= hi; ci++ {
			c := float64(ci)
			l, target := fractional(Setting(), model(c), k)
			limit := slowStartBound(c, l.Start) + extra
			r := runGovernor(t, v, l, target, UntilWindows(limit+margin))
			n, ok := EnteredAndStayed(r.Offers(), SettleBand(c, l.High))
			if !ok || n > limit {
				if w, flipped := roundingFlip(r, model(c), l); k == 1 && flipped {
					flips++
					t.Logf("%s c=%v, whole attempts: settled after %d windows, want <= %d: window at %v judged %.4g, the model's fraction there is %.4g",
						name, c, n, limit, w.Offer, w.Frac, w.FailFrac)
					continue
				}
				t.Fatalf("%s c=%v (attempts in units of 1/%v): offer settled in [%.4g, %.4g] after %d windows (settled=%v), want <= %d; offers %v",
					name, c, k, 0.95*c, c/(1-l.High), n, ok, limit, r.Offers())
			}
			if slack := n - limit; slack > worst {
				worst, worstC = slack, ci
			}
		}
		t.Logf("%s, attempts in units of 1/%v: c = %d…%d, tightest: c=%d settled %d windows before its deadline; %d misses tipped by rounding",
			name, k, lo, hi, worstC, -worst, flips)
	}
}

// roundingFlip returns a full window of r (not an early breach) that whole
// attempts put in another class than the model's exact fraction over the
// same span and offer would: one attempt more or less tipped a dead-band
// hold into a breach or a clean window, or the other way round. The
// window's FailFrac is set to the exact fraction, for the log. Such a
// window is the governor judging the evidence it was given, and it can
// cost a few windows at a capacity where the band's edge falls on a whole
// attempt; which capacities those are depends on where each window starts.
func roundingFlip(r Result, model Target, l governor.Limits) (governor.Window, bool) {
	class := func(f float64) int {
		switch {
		case f > l.High:
			return 2
		case f > l.Low:
			return 1
		}
		return 0
	}
	for _, w := range r.Windows {
		if w.Early || w.OK+w.Failed == 0 {
			continue
		}
		eok, efail := model.Serve(w.Start.Sub(Epoch), w.Offer, w.End.Sub(w.Start), nil)
		if exact := efail / (eok + efail); class(exact) != class(w.Frac) {
			w.FailFrac = exact
			return w, true
		}
	}
	return governor.Window{}, false
}

func TestShedSweepSettlesWithinLog2Plus6(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) { checkSettles(t, v, "shed", Shed, 20, 9000, 6, 20) })
}

func TestCollapseSweepSettlesWithinLog2Plus10(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) { checkSettles(t, v, "collapse", Collapse, 50, 9000, 10, 20) })
}

// fractional returns target with its counts in units of 1/k attempt, and
// limits with MinAttempts scaled to match: the same governor judging the
// same evidence, but with failure fractions k times finer than whole
// attempts allow. It is the expected-value model the bars are stated in.
func fractional(l governor.Limits, target Target, k float64) (governor.Limits, Target) {
	l.MinAttempts = uint64(float64(l.MinAttempts) * k)
	return l, TargetFunc(func(at time.Duration, x float64, step time.Duration, rng *rand.Rand) (float64, float64) {
		ok, failed := target.Serve(at, x, step, rng)
		return ok * k, failed * k
	})
}

// changeAt is when the capacity changes in the mid-run tests: every c up to
// 9 000 has settled by then (the shed sweep's deadline is at most 20
// windows, 120 s of simulated time with the long opening windows).
const changeAt = 150 * time.Second

// settleAfterChange runs the governor against shed capacity c that becomes
// after at changeAt, checks that the offer had settled around c before the
// change, and returns the run and how many windows after the change the
// offer took to enter and stay in the new band.
func settleAfterChange(t *testing.T, v variant, l governor.Limits, target Target, c, after float64, margin int) (Result, int) {
	t.Helper()
	r := runGovernor(t, v, l, target, For(changeAt+time.Duration(margin)*l.Window))
	i0 := r.Since(changeAt)
	if before := r.Offers()[i0]; !SettleBand(c, l.High).Contains(before) {
		t.Fatalf("c=%v: offer %v at the change is not settled around c", c, before)
	}
	n, ok := EnteredAndStayed(r.Offers()[i0:], SettleBand(after, l.High))
	if !ok {
		t.Fatalf("c=%v→%v: offer never settled in the new band; offers after the change %v", c, after, r.Offers()[i0:])
	}
	return r, n
}

// TestCapacityDoublesMemoryClearsAndSettlesWithin22Windows doubles a settled
// shed capacity, for every second c from 20 to 4 500 (the bar asks for no
// sweep): the offer must settle in the new band within 22 windows and, when
// a back-off had set last-bad, the memory must clear at an offer at or above
// it before the offer settles.
func TestCapacityDoublesMemoryClearsAndSettlesWithin22Windows(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) {
		const bar = 22
		for _, k := range []float64{1000, 1} {
			worst, cleared, flips := 0, 0, 0
			for ci := 20; ci <= 4500; ci += 2 {
				c := float64(ci)
				model := Switch(Shed(c), Shed(2*c), changeAt)
				l, target := fractional(Setting(), model, k)
				r, n := settleAfterChange(t, v, l, target, c, 2*c, bar+20)
				if n > bar {
					if w, flipped := roundingFlip(r, model, l); k == 1 && flipped {
						flips++
						t.Logf("c=%v→%v, whole attempts: settled %d windows after the change, want <= %d: window at %v judged %.4g, the model's fraction there is %.4g", c, 2*c, n, bar, w.Offer, w.Frac, w.FailFrac)
						continue
					}
					t.Fatalf("c=%v→%v (attempts in units of 1/%v): settled %d windows after the change, want <= %d; offers %v", c, 2*c, k, n, bar, r.Offers()[r.Since(changeAt):])
				}
				worst = max(worst, n)
				i0 := r.Since(changeAt)
				lastBad := r.Windows[i0-1].Decision.LastBad
				if lastBad == 0 {
					continue // slow start never breached (c just under a power of two): nothing to clear
				}
				// The memory must clear, by the streak, once the additive probes
				// passed last-bad, and before the offer settles in the new band.
				j := i0
				for j < len(r.Windows) && r.Windows[j].Decision.Signal != governor.SignalMemoryCleared {
					j++
				}
				if j == len(r.Windows) {
					t.Fatalf("c=%v→%v: last-bad %v never cleared after the change", c, 2*c, lastBad)
				}
				clear, memory := r.Windows[j], r.Windows[j-1].Decision.LastBad
				if clear.Offer < memory {
					t.Fatalf("c=%v→%v: memory cleared at offer %v, below last-bad %v", c, 2*c, clear.Offer, memory)
				}
				if j >= i0+n {
					t.Fatalf("c=%v→%v: memory cleared in window %d after the change, not before the offer settled (%d)", c, 2*c, j-i0, n)
				}
				cleared++
			}
			t.Logf("doubling, attempts in units of 1/%v, every second c = 20…4500: slowest settled %d windows after the change; memory cleared in all %d runs that had one; %d misses tipped by rounding", k, worst, cleared, flips)
		}
	})
}

// TestCapacityHalvesSettlesWithin6Windows checks the halving bar twice, for
// every second c (the bar asks for no sweep): in the bar's own model,
// failure fractions exactly (x − c)/x (attempts counted in thousandths),
// every c from 40 settles within 6 windows; with whole attempts, from
// c = 46, a c that does not must show the window that tipped it
// (roundingFlip). At the smallest capacities (new capacity 20 to 30, about
// 100 to 150 attempts a window) one attempt more or less moves a window's
// fraction by about 1 %, enough to tip a dead-band hold at 1.049 c (true
// fraction 4.6 %) over high or a hold at 1.011 c under low once in a while;
// which capacities that hits depends on where each window starts. That is
// the governor reacting to the evidence it was given, not a broken rule.
// Below c = 46 (new capacity under 23) whole attempts also move where a
// back-off lands by a few per cent, and c = 40…45 take 7 to 16 windows.
//
// The early breach judges the window's tail before the window so far:
// without that, the window in progress at the change breached on evidence
// mostly gathered before it, backed off only a little and set last-bad
// high, and the safe climb that followed overshot the new capacity once
// more.
func TestCapacityHalvesSettlesWithin6Windows(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) {
		const bar = 6
		for _, k := range []float64{1000, 1} {
			worst, flips := 0, 0
			for ci := map[float64]int{1000: 40, 1: 46}[k]; ci <= 9000; ci += 2 {
				c := float64(ci)
				model := Switch(Shed(c), Shed(c/2), changeAt)
				l, target := fractional(Setting(), model, k)
				r, n := settleAfterChange(t, v, l, target, c, c/2, bar+20)
				if n > bar {
					if w, flipped := roundingFlip(r, model, l); k == 1 && flipped {
						flips++
						t.Logf("c=%v→%v, whole attempts: settled %d windows after the change, want <= %d: window at %v judged %.4g, the model's fraction there is %.4g", c, c/2, n, bar, w.Offer, w.Frac, w.FailFrac)
						continue
					}
					t.Fatalf("c=%v→%v (attempts in units of 1/%v): settled %d windows after the change, want <= %d; offers %v", c, c/2, k, n, bar, r.Offers()[r.Since(changeAt):])
				}
				worst = max(worst, n)
			}
			t.Logf("halving, attempts in units of 1/%v, every second c from %d to 9000: slowest settled %d windows after the change; %d misses tipped by rounding", k, map[float64]int{1000: 40, 1: 46}[k], worst, flips)
		}
	})
}

// TestNoisyCapacityWithin5Percent samples the failures binomially and checks
// that governor.Capacity (goodput over the settled windows) lands within
// ±5 % of c, for every third integer c of both sweeps, one seed per c (the
// bar asks for no sweep; every third c keeps the package's tests short).
func TestNoisyCapacityWithin5Percent(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) {
		l := Setting()
		for _, tc := range []struct {
			name   string
			model  func(c float64) Target
			lo, hi int
		}{
			{"shed", Shed, 20, 9000},
			{"collapse", Collapse, 50, 9000},
			// Background failures at half of low make dead-band holds at offer 1
			// on one unlucky failure of 20: governor.Capacity must not count them.
			{"shed with background failures", func(c float64) Target { return Noisy(Shed(c), Background) }, 20, 9000},
		} {
			lo, hi := math.Inf(1), math.Inf(-1)
			for ci := tc.lo; ci <= tc.hi; ci += 3 {
				c := float64(ci)
				r := runGovernor(t, v, l, tc.model(c), UntilWindows(40), WithNoise(uint64(ci)))
				e := governor.Capacity(r.Windows, l.High)
				if e.Windows == 0 {
					t.Fatalf("%s c=%v: no settled windows in %d", tc.name, c, len(r.Windows))
				}
				g := e.Goodput / c
				if g < 0.95 || g > 1.05 {
					t.Fatalf("%s c=%v: capacity estimate %.4g = %.4g c over %d settled windows, want within ±5 %%", tc.name, c, e.Goodput, g, e.Windows)
				}
				lo, hi = math.Min(lo, g), math.Max(hi, g)
			}
			t.Logf("%s with sampling noise, every third c = %d…%d: goodput over settled windows / c in [%.4f, %.4f]", tc.name, tc.lo, tc.hi, lo, hi)
		}
	})
}

// TestDeadTargetDrivesOfferToFloorAndRecovers kills a settled shed target
// for ten minutes: the offer must fall to the floor and stay there while
// every attempt fails, then climb back and settle around c once it recovers.
func TestDeadTargetDrivesOfferToFloorAndRecovers(t *testing.T) {
	t.Parallel()
	eachVariant(t, func(t *testing.T, v variant) {
		l := Setting()
		const from, until = 300 * time.Second, 900 * time.Second
		for _, c := range []float64{20, 137, 1000, 5000, 9000} {
			r := runGovernor(t, v, l, Dead(Shed(c), from, until), For(until+600*time.Second))
			i0, i1 := r.Since(from), r.Since(until)
			offers := r.Offers()
			if !SettleBand(c, l.High).Contains(offers[i0]) {
				t.Fatalf("c=%v: offer %v had not settled before the target died", c, offers[i0])
			}
			n := slices.Index(offers[i0:i1], l.Floor)
			if n < 0 || offers[i1] != l.Floor {
				t.Fatalf("c=%v: offer never reached the floor while the target was dead (offer at recovery %v); offers %v", c, offers[i1], offers[i0:i1+1])
			}
			for i, x := range offers[i0+n : i1+1] {
				if x != l.Floor {
					t.Fatalf("c=%v: offer left the floor to %v while the target was still dead (window %d)", c, x, i0+n+i)
				}
			}
			settled, ok := EnteredAndStayed(offers[i1:], SettleBand(c, l.High))
			if !ok {
				t.Fatalf("c=%v: offer did not climb back and settle after recovery; offers %v", c, offers[i1:])
			}
			t.Logf("c=%v: floor %d windows after death, settled %d windows after recovery", c, n, settled)
		}
	})
}

// TestConfirmedValueIsRespected gives the governor a control handle whose
// apply caps every write at 300 against a robust target: the governor must
// take the confirmed 300, not its asked 512, as its committed offer, judge
// its windows there and keep the target at 300.
func TestConfirmedValueIsRespected(t *testing.T) {
	t.Parallel()
	l := Setting()
	const cap = 300
	var asked []float64
	g := NewGovernor(l, WithApplier(governor.ApplierFunc(func(x float64) float64 {
		asked = append(asked, x)
		return math.Min(x, cap)
	})))
	r, err := Run(g, Robust(), UntilWindows(20))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Max(asked) <= cap {
		t.Fatalf("the governor never asked above the cap (asked %v): the test proves nothing", asked)
	}
	if st := g.State(); st.Offer != cap {
		t.Fatalf("committed offer %v, want the confirmed %v", st.Offer, cap)
	}
	for i, w := range r.Windows[1:] {
		// Each window is judged at what the handle applied for the previous
		// window's ask, never at the ask itself.
		if want := math.Min(r.Windows[i].Decision.Offer, cap); w.Offer != want {
			t.Fatalf("window %d judged at %v, want the confirmed %v (asked %v)", i+1, w.Offer, want, r.Windows[i].Decision.Offer)
		}
	}
	// The windows at the cap still ask to double, so the quick climb closes
	// them early: each holds the cap's attempts over its own span.
	if last := r.Windows[len(r.Windows)-1]; last.Offer != cap || last.OK != uint64(cap*last.End.Sub(last.Start).Seconds()) {
		t.Fatalf("last window at %v with %d ok attempts over %v, want %v and %v: the target must see the applied value", last.Offer, last.OK, last.End.Sub(last.Start), cap, cap*last.End.Sub(last.Start).Seconds())
	}
}

// TestMinAttemptsOnlyLengthensOpeningWindows backs the way the bars count
// windows: with the default MinAttempts (20) the windows at offers 1 and 2
// last 20 s and 10 s instead of 5 s, but the governor takes exactly the
// same decisions as with MinAttempts = 1, for every fifth c of both sweeps
// (a claim about the bookkeeping, not a bar, so a sample will do).
func TestMinAttemptsOnlyLengthensOpeningWindows(t *testing.T) {
	t.Parallel()
	l := Setting()
	one := l
	one.MinAttempts = 1
	for ci := 20; ci <= 9000; ci += 5 {
		c := float64(ci)
		for _, model := range []func(float64) Target{Shed, Collapse} {
			n := slowStartBound(c, l.Start) + 12
			a := runGovernor(t, seed, l, model(c), UntilWindows(n))
			b := runGovernor(t, seed, one, model(c), UntilWindows(n))
			if !slices.Equal(a.Offers(), b.Offers()) {
				t.Fatalf("c=%v: MinAttempts 20 decided %v, MinAttempts 1 decided %v", c, a.Offers(), b.Offers())
			}
			if d := a.Elapsed - b.Elapsed; d != 20*time.Second {
				t.Fatalf("c=%v: MinAttempts 20 took %v longer than MinAttempts 1, want 20 s (15 s at offer 1, 5 s at offer 2)", c, d)
			}
		}
	}
}

// TestEarlyBreachRarelyCutsShortAWindowAtHigh samples windows whose true
// failure fraction is exactly High (5 %) at offers from 20 to 5000/s and
// counts those the early breach cut short. Its test is corrected for the
// looks a window takes, so at most 1 % should be; the simulator's Poisson
// draws of rare failures have a slightly heavier tail than the binomial,
// and 2 000 windows an offer leave a sampling error of about 0.2 %, so the
// test asks for at most 2 %. (With a Wilson bound in place of the exact
// binomial test 2 to 4.4 % were cut short.)
func TestEarlyBreachRarelyCutsShortAWindowAtHigh(t *testing.T) {
	t.Parallel()
	const windows = 2000
	atHigh := TargetFunc(func(_ time.Duration, x float64, step time.Duration, _ *rand.Rand) (float64, float64) {
		return 0.95 * x * step.Seconds(), 0.05 * x * step.Seconds()
	})
	for _, c := range []float64{20, 50, 100, 300, 1000, 5000} {
		l := Setting()
		l.Start, l.Ceiling = c, c
		cut := 0
		for seed := uint64(1); seed <= windows; seed++ {
			r := runGovernor(t, early, l, atHigh, UntilWindows(1), WithNoise(seed))
			if r.Windows[0].Early {
				cut++
			}
		}
		share := float64(cut) / windows
		t.Logf("offer %v/s: %d of %d windows at a true 5 %% cut short (%.2f %%)", c, cut, windows, 100*share)
		if share > 0.02 {
			t.Fatalf("offer %v/s: %d of %d windows at a true 5 %% were cut short by an early breach (%.2f %%), want at most 2 %%", c, cut, windows, 100*share)
		}
	}
}
