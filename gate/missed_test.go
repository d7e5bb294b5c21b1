package gate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/throttlekit/throttle/gate"
)

// scheduled counts the admissions a schedule started at start makes due at
// a constant offer by at: k = 0, 1, … with start + k/offer <= at, on the
// gate's whole-nanosecond due times.
func scheduled(start, at time.Time, offer float64) uint64 {
	if at.Before(start) {
		return 0
	}
	iv := 1e9 / offer
	el := int64(at.Sub(start))
	k := math.Floor(float64(el) / iv)
	for int64((k+1)*iv) <= el {
		k++
	}
	for k > 0 && int64(k*iv) > el {
		k--
	}
	return uint64(k) + 1
}

// account is Admitted + Missed + Behind(at): what the gate says became of
// the schedule's admissions by at.
func account(g *gate.Gate, at time.Time) uint64 {
	s := g.Stats()
	return s.Admitted + s.Missed + g.Behind(at)
}

// A caller that is late by less than the burst window, then by far more,
// then idle, at irregular instants: at every instant, before and after it
// takes what is due, admitted + missed + behind is exactly the schedule's
// count, and missed is exactly what the restarts skipped.
func TestMissedAccountIsExact(t *testing.T) {
	for _, tc := range []struct {
		offer float64
		burst time.Duration
	}{
		{0.5, gate.DefaultBurst},
		{40, 10 * time.Millisecond},
		{37.5, gate.DefaultBurst},
		{1000, gate.DefaultBurst},
		{200, 0},
		{50_000, 10 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%v/s/burst=%v", tc.offer, tc.burst), func(t *testing.T) {
			g, fc := newFake(t, rateCfg(tc.offer), gate.WithBurst(tc.burst))
			start := fc.Now()
			rng := rand.New(rand.NewPCG(1, uint64(tc.offer)))
			iv := time.Duration(1e9 / tc.offer)
			var lastMissed uint64
			restarts := 0
			for i := range 2000 {
				var step time.Duration
				switch r := rng.IntN(10); {
				case r < 6: // on time or a little late, within the window
					step = time.Duration(rng.Int64N(int64(iv + tc.burst + 1)))
				case r < 9: // late beyond the window
					step = tc.burst + time.Duration(rng.Int64N(int64(5*iv+tc.burst+1)))
				default: // idle
					step = 50*iv + time.Duration(rng.Int64N(int64(time.Second)))
				}
				fc.Advance(step)
				now := fc.Now()
				want := scheduled(start, now, tc.offer)
				if i == 0 {
					// The schedule starts at the first call.
					start, want = now, 1
				}
				if got := account(g, now); i > 0 && got != want {
					t.Fatalf("step %d at %v: admitted+missed+behind = %d before taking, want the schedule's %d (%+v)", i, now.Sub(t0), got, want, g.Stats())
				}
				drain(g)
				if got := account(g, now); got != want {
					t.Fatalf("step %d at %v: admitted+missed+behind = %d after taking, want the schedule's %d (%+v)", i, now.Sub(t0), got, want, g.Stats())
				}
				if b := g.Behind(now); b != 0 {
					t.Fatalf("step %d: %d behind after TryAcquire refused", i, b)
				}
				if m := g.Missed(); m != lastMissed {
					restarts++
					lastMissed = m
				}
			}
			if s := g.Stats(); s.Missed == 0 || s.Missed != g.Missed() || restarts == 0 {
				t.Fatalf("stats %+v, Missed() %d, %d restarts: the late steps must have missed some", s, g.Missed(), restarts)
			}
		})
	}
}

// An offer change neither makes nor loses an admission: the account is the
// same just before and just after it, and a schedule that never lags by
// more than the window misses nothing as the offer moves — unless a fall
// clamps its lag to the window (then exactly the clamped ones are missed).
func TestMissedAcrossOfferChanges(t *testing.T) {
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 100_000, Offer: 1000})
	rng := rand.New(rand.NewPCG(7, 7))
	drain(g)
	for i := range 3000 {
		fc.Advance(time.Duration(rng.Int64N(int64(3 * time.Millisecond))))
		now := fc.Now()
		if rng.IntN(3) == 0 {
			drain(g)
		}
		before := account(g, now)
		applied := g.Apply(math.Exp(rng.Float64() * math.Log(100_000)))
		if after := account(g, now); after != before {
			t.Fatalf("step %d: Apply(%v) moved the account from %d to %d", i, applied, before, after)
		}
		drain(g)
		if b := g.Behind(now); b != 0 {
			t.Fatalf("step %d: %d behind after TryAcquire refused", i, b)
		}
	}
}

// Begin anchors the schedule: a first caller within the window catches up
// on what it owes, each admission reporting its own due instant; one later
// than the window misses all but the window's worth.
func TestBeginAnchorsTheSchedule(t *testing.T) {
	g, fc := newFake(t, rateCfg(1000), gate.WithBurst(5*time.Millisecond))
	g.Begin(t0)
	fc.Advance(3*time.Millisecond + 500*time.Microsecond)
	n, due := drain(g)
	if n != 4 || !due[0].Equal(t0) || !due[3].Equal(t0.Add(3*time.Millisecond)) || g.Missed() != 0 {
		t.Fatalf("%d admitted due %v, missed %d: want 4 due at 0, 1, 2, 3 ms, none missed", n, due, g.Missed())
	}

	g, fc = newFake(t, rateCfg(1000), gate.WithBurst(5*time.Millisecond))
	g.Begin(t0)
	fc.Advance(20 * time.Millisecond) // 21 due (0..20 ms); the window holds 6
	if b := g.Behind(fc.Now()); b != 21 {
		t.Fatalf("behind %d, want 21", b)
	}
	n, _ = drain(g)
	if n != 6 || g.Missed() != 15 || account(g, fc.Now()) != 21 {
		t.Fatalf("%d admitted, %d missed: want the window's 6 and 15 missed", n, g.Missed())
	}

	// Concurrency mode has no schedule.
	c, _ := newFake(t, gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 2, Offer: 2})
	c.Begin(t0.Add(-time.Hour))
	if _, ok := c.TryAcquire(); !ok || c.Missed() != 0 || c.Behind(t0.Add(time.Hour)) != 0 {
		t.Fatalf("concurrency: missed %d, behind %d: want none", c.Missed(), c.Behind(t0.Add(time.Hour)))
	}
}

// End closes the schedule: 40/s from 0 until 1 s is exactly 40 admissions
// (k/40 for k/40 < 1 s, as k6 starts iterations), whether the caller keeps
// up or falls behind; none past the end is granted or missed, and a waiter
// past it waits on no timer until its context ends.
func TestEndClosesTheSchedule(t *testing.T) {
	for _, late := range []time.Duration{0, 300 * time.Millisecond} {
		g, fc := newFake(t, rateCfg(40), gate.WithBurst(10*time.Millisecond))
		g.Begin(t0)
		g.End(t0.Add(time.Second))
		drain(g)
		for fc.Now().Before(t0.Add(2 * time.Second)) {
			step := 5 * time.Millisecond
			if late > 0 && fc.Now().Equal(t0.Add(800*time.Millisecond)) {
				step = late // a stall across the schedule's end
			}
			fc.Advance(step)
			drain(g)
		}
		now := fc.Now()
		if a := account(g, now); a != 40 || g.Behind(now) != 0 {
			t.Fatalf("stall %v: admitted+missed+behind = %d (%+v), want exactly 40", late, a, g.Stats())
		}
		if late > 0 && g.Missed() == 0 {
			t.Fatalf("stall %v: nothing missed", late)
		}
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan result, 1)
		acquireAsync(ctx, g, 1, out)
		waitFor(t, "the waiter to queue", func() bool { return g.Stats().Waiting == 1 })
		if fc.Waiters() != 0 {
			t.Fatalf("a waiter past the end armed a timer")
		}
		fc.Advance(time.Hour)
		noResult(t, out)
		cancel()
		if r := recv(t, out); r.err == nil {
			t.Fatalf("a waiter past the end was admitted")
		}
	}
}
