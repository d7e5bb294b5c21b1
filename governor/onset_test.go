package governor

import (
	"math"
	"testing"
	"time"
)

// concurrencyLimits: concurrency mode (VUs), ceiling 400, the defaults
// otherwise (high 5 %, MinAttempts 20, window 5 s).
func concurrencyLimits(start float64) Limits {
	l := NewLimits(Concurrency, 400)
	l.Window = 5 * time.Second
	l.Start = start
	return l
}

// doubled returns a harness whose slow start has just doubled 128 → 256
// VUs on two clean seconds.
func doubled(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := newHarness(t, concurrencyLimits(128), opts...)
	h.c.add(256, 0)
	if ask, ok := h.tick(2 * time.Second); !ok || ask != 256 {
		t.Fatalf("slow start: ask %v %v, want 256", ask, ok)
	}
	h.confirm(256)
	return h
}

// A slow-start doubling against a limiter with a burst allowance: the
// window's first read is clean (the allowance takes the excess), the next
// fails 25 of 55. The breach is decided on the window (25 of 105, 23.8 %),
// and with the quick climb the back-off takes the fraction since the damage
// began (25 of 55): 256 × 30/55 → 139, where the window's own fraction
// backs off only to 195 and a second breach follows.
func TestBreachBacksOffOnTheFractionSinceTheDamageBegan(t *testing.T) {
	for _, c := range []struct {
		name  string
		quick bool
		want  float64
		frac  float64
		tail  time.Duration
	}{
		{"quick climb", true, math.Floor(256 * 30.0 / 55), 25.0 / 55, oneRead},
		{"without", false, math.Floor(256 * 80.0 / 105), 25.0 / 105, 0},
	} {
		var h *harness
		if c.quick {
			h = doubled(t, WithQuickClimb(true))
		} else {
			h = newHarness(t, concurrencyLimits(256))
		}
		h.c.add(50, 0)
		if _, ok := h.tick(oneRead); ok {
			t.Fatalf("%s: a clean read closed the window", c.name)
		}
		h.c.add(30, 25)
		ask, ok := h.tick(oneRead)
		if !ok || ask != c.want {
			t.Fatalf("%s: ask %v %v, want a back-off to %v", c.name, ask, ok, c.want)
		}
		if w := h.last(); !w.Early || w.Frac != c.frac || w.Tail != c.tail || w.OK != 80 || w.Failed != 25 {
			t.Fatalf("%s: window %+v, want an early breach on %v over the newest %v", c.name, w, c.frac, c.tail)
		}
	}
}

// After a probe the onset is not read: a small excess refused in lumps
// would back off a third on a read; the window's fraction stands.
func TestBreachOnsetOnlyAfterAClimb(t *testing.T) {
	h := newHarness(t, concurrencyLimits(256), WithQuickClimb(true))
	h.c.add(50, 0)
	h.tick(oneRead)
	h.c.add(30, 25)
	if ask, ok := h.tick(oneRead); !ok || ask != math.Floor(256*80.0/105) {
		t.Fatalf("ask %v %v, want the window's back-off to %v", ask, ok, math.Floor(256*80.0/105))
	}
}

// When the window was damaged from its start the target did not change
// inside it: the back-off takes the window's fraction, not its newest read.
func TestBreachOnsetNeedsACleanStart(t *testing.T) {
	h := doubled(t, WithQuickClimb(true))
	h.c.add(40, 10)
	h.tick(oneRead)
	h.c.add(30, 25)
	ask, ok := h.tick(oneRead)
	if want := math.Floor(256 * 70.0 / 105); !ok || ask != want || h.last().Frac != 35.0/105 {
		t.Fatalf("ask %v %v window %+v, want the window's 35 of 105 and a back-off to %v", ask, ok, h.last(), want)
	}
}

// The window right after a back-off breaches on 2 × MinAttempts with the
// quick climb: 15 failures of 40 in a read back off at once, where without
// it the same evidence waits for five MinAttempts or a tick.
func TestBreachAfterABackoffRestsOnTwiceMinAttempts(t *testing.T) {
	for _, quick := range []bool{true, false} {
		h := newHarness(t, concurrencyLimits(200), WithQuickClimb(quick))
		h.c.add(60, 60)
		ask, ok := h.tick(oneRead)
		if !ok || ask != 100 {
			t.Fatalf("quick %v: first breach ask %v %v, want 100", quick, ask, ok)
		}
		h.confirm(ask)
		h.c.add(25, 15)
		ask, ok = h.tick(oneRead)
		if quick != ok {
			t.Fatalf("quick %v: 15 of 40 a read after a back-off: decided %v (ask %v), want %v", quick, ok, ask, quick)
		}
		if ok && ask != math.Floor(100*25.0/40) {
			t.Fatalf("back-off to %v, want %v", ask, math.Floor(100*25.0/40))
		}
	}
	// Before any back-off the same read is not evidence enough.
	h := newHarness(t, concurrencyLimits(100), WithQuickClimb(true))
	h.c.add(25, 15)
	if ask, ok := h.tick(oneRead); ok {
		t.Fatalf("15 of 40 in a first window decided: ask %v", ask)
	}
}

// The few-attempt breach is for windows that stay short of evidence. A
// lump of three refusals in a read at 60 VUs decides a first window (nothing
// says the window will hold more), but not one after a window whose pace
// was an attempt a second per VU: at 60 VUs that window will hold 300.
func TestFewBreachReadsTheLastWindowsPace(t *testing.T) {
	h := newHarness(t, concurrencyLimits(60), WithQuickClimb(true))
	h.c.add(0, 3)
	if ask, ok := h.tick(oneRead); !ok || ask != 15 {
		t.Fatalf("first window: ask %v %v, want the few-attempt breach's back-off to 15", ask, ok)
	}

	h = newHarness(t, concurrencyLimits(100), WithQuickClimb(true))
	h.c.add(60, 40)
	if ask, ok := h.tick(time.Second); !ok || ask != 60 {
		t.Fatalf("ask %v %v, want the back-off to 60", ask, ok)
	}
	h.confirm(60)
	h.c.add(0, 3)
	if ask, ok := h.tick(oneRead); ok {
		t.Fatalf("3 refusals in a read at the pace of 60 a second decided: ask %v", ask)
	}
}
