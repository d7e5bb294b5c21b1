package gate_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/gate"
)

// simulate advances the fake clock by step until span has passed, admitting
// with TryAcquire after every step (including at the start), and returns the
// due times of all admissions.
func simulate(g *gate.Gate, fc *clock.Fake, span, step time.Duration) []time.Time {
	_, due := drain(g)
	for el := time.Duration(0); el < span; el += step {
		fc.Advance(step)
		_, d := drain(g)
		due = append(due, d...)
	}
	return due
}

// burstTokens is the documented burst after idling: 1 + ⌊offer × burst⌋.
func burstTokens(offer float64, burst time.Duration) int {
	return 1 + int(math.Floor(offer*burst.Seconds()))
}

func TestRateAdmissionsMatchOfferTimesTime(t *testing.T) {
	const span = 10 * time.Second
	for _, tc := range []struct {
		offer float64
		step  time.Duration
	}{
		{0.1, 100 * time.Millisecond},
		{1, 10 * time.Millisecond},
		{37.5, time.Millisecond},
		{10_000, 100 * time.Microsecond},
		{200_000, 500 * time.Microsecond},
	} {
		// Without a burst a caller later than its due time loses the
		// lateness, by design; stepping the clock makes every caller late,
		// so WithBurst(0) is covered by exact-step tests below.
		for _, burst := range []time.Duration{gate.DefaultBurst, 10 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v/s/burst=%v", tc.offer, burst), func(t *testing.T) {
				g, fc := newFake(t, rateCfg(tc.offer), gate.WithBurst(burst))
				due := simulate(g, fc, span, tc.step)

				// Every admission over the span, including the opening burst.
				want := tc.offer * span.Seconds()
				extra := float64(burstTokens(tc.offer, burst) - 1)
				if n := float64(len(due)); n < want-1 || n > want+extra+1 {
					t.Errorf("admitted %v in %v at %v/s, want %v within one token (+%v burst)", n, span, tc.offer, want, extra)
				}
				// Scheduled (due) in a span after the opening burst: offer ×
				// time within one token, whatever the burst.
				from, to := t0.Add(time.Second), t0.Add(span)
				in := 0
				for _, d := range due {
					if !d.Before(from) && d.Before(to) {
						in++
					}
				}
				if want := tc.offer * (to.Sub(from)).Seconds(); math.Abs(float64(in)-want) > 1 {
					t.Errorf("%d admissions due in [1s, 10s), want %v within one token", in, want)
				}
				for i := 1; i < len(due); i++ {
					if due[i].Before(due[i-1]) {
						t.Fatalf("due times go backwards: %v then %v", due[i-1], due[i])
					}
				}
			})
		}
	}
}

func TestRateDueTimesAreExact(t *testing.T) {
	// 37.5/s: the interval, 26.666… ms, is not a whole number of
	// nanoseconds; due times come from the anchor, so no rounding piles up.
	g, fc := newFake(t, rateCfg(37.5))
	var due []time.Time
	for len(due) < 400 {
		_, d := drain(g)
		due = append(due, d...)
		fc.Advance(time.Millisecond)
	}
	for k, d := range due {
		want := t0.Add(time.Duration(float64(k) * 1e9 / 37.5))
		if !d.Equal(want) {
			t.Fatalf("admission %d due at %v, want %v", k, d.Sub(t0), want.Sub(t0))
		}
	}
	if got, want := due[375].Sub(due[0]), 10*time.Second; got < want-time.Nanosecond || got > want {
		t.Errorf("375 intervals at 37.5/s span %v, want 10s", got)
	}
}

func TestRateChangeMidway(t *testing.T) {
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 1000, Offer: 100})
	before := len(simulate(g, fc, 5*time.Second, time.Millisecond))
	// Tokens due at 0, 10 ms, …, 5 s: 501, the first being the opening burst.
	if before < 500 || before > 502 {
		t.Errorf("admitted %d over 5 s at 100/s, want 500 within one token (+1 opening)", before)
	}
	if applied := g.Apply(400); applied != 400 {
		t.Fatalf("Apply(400) = %v, want 400", applied)
	}
	if after := len(simulate(g, fc, 5*time.Second, time.Millisecond)); after < 1999 || after > 2001 {
		t.Errorf("admitted %d over 5 s after raising to 400/s, want 2000 within one token", after)
	}
	if applied := g.Apply(10); applied != 10 {
		t.Fatalf("Apply(10) = %v, want 10", applied)
	}
	if low := len(simulate(g, fc, 5*time.Second, time.Millisecond)); low < 49 || low > 51 {
		t.Errorf("admitted %d over 5 s after lowering to 10/s, want 50 within one token", low)
	}
}

func TestRateRiseGivesNoSavedUpBurst(t *testing.T) {
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 0.5, Ceiling: 1000, Offer: 1})
	if n, _ := drain(g); n != 1 {
		t.Fatalf("opening admissions at 1/s = %d, want 1", n)
	}
	fc.Advance(500 * time.Millisecond) // half the 1 s interval waited
	g.Apply(100)
	// Half an interval at the new rate remains: 5 ms, not 10, not 0.
	if n, _ := drain(g); n != 0 {
		t.Fatalf("%d admitted the instant the rate rose, want 0 (no saved-up tokens)", n)
	}
	fc.Advance(4 * time.Millisecond)
	if n, _ := drain(g); n != 0 {
		t.Fatalf("%d admitted 4 ms after the rise, want 0", n)
	}
	fc.Advance(time.Millisecond)
	n, due := drain(g)
	if n != 1 {
		t.Fatalf("%d admitted 5 ms after the rise, want 1", n)
	}
	if want := t0.Add(505 * time.Millisecond); !due[0].Equal(want) {
		t.Errorf("first admission after the rise due at %v, want %v", due[0].Sub(t0), want.Sub(t0))
	}
}

func TestRateFallStallsNoLongerThanOneNewInterval(t *testing.T) {
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 0.5, Ceiling: 1000, Offer: 100})
	drain(g) // admission due at 0; the next is due at 10 ms
	fc.Advance(time.Millisecond)
	g.Apply(1)
	// 9 ms of the 10 ms interval remained: 0.9 of a token, 900 ms at 1/s.
	fc.Advance(899 * time.Millisecond)
	if n, _ := drain(g); n != 0 {
		t.Fatalf("%d admitted before the pro-rated due time", n)
	}
	fc.Advance(time.Millisecond)
	if n, due := drain(g); n != 1 || !due[0].Equal(t0.Add(901*time.Millisecond)) {
		t.Fatalf("admitted %d (due %v), want 1 due at 901 ms: at most one new interval after the fall", n, due)
	}
	fc.Advance(999 * time.Millisecond)
	if n, _ := drain(g); n != 0 {
		t.Fatalf("%d admitted less than one interval after the last at 1/s", n)
	}
}

func TestNoBurstAfterIdleBeyondTheDocumentedOne(t *testing.T) {
	for _, tc := range []struct {
		offer float64
		burst time.Duration
	}{
		{1, gate.DefaultBurst},
		{1000, gate.DefaultBurst},
		{200_000, gate.DefaultBurst},
		{200_000, 0},
		{5000, 10 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("%v/s/burst=%v", tc.offer, tc.burst), func(t *testing.T) {
			g, fc := newFake(t, rateCfg(tc.offer), gate.WithBurst(tc.burst))
			want := burstTokens(tc.offer, tc.burst)
			// The schedule starts at the first call: nothing was owed
			// before it, so there is nothing to catch up on.
			if n, _ := drain(g); n != 1 {
				t.Errorf("opening burst = %d, want 1: the schedule starts at the first call", n)
			}
			// Step no coarser than the interval, so that WithBurst(0)
			// loses nothing to the stepping.
			step := min(100*time.Microsecond, time.Duration(1e9/tc.offer))
			simulate(g, fc, 100*time.Millisecond, step)
			fc.Advance(10 * time.Second) // idle
			n, due := drain(g)
			if n != want {
				t.Errorf("burst after 10 s idle = %d, want 1 + ⌊offer × burst⌋ = %d", n, want)
			}
			now := t0.Add(10*time.Second + 100*time.Millisecond)
			for i, d := range due {
				// The newest owed is kept however old (at most one
				// interval); the others are within the window.
				oldest := now.Add(-max(tc.burst, time.Duration(1e9/tc.offer)))
				if d.After(now) || d.Before(oldest) || i > 0 && !d.After(due[i-1]) {
					t.Errorf("after idling, admission due at %v, want its own instant, in order, within the window (or one interval) before the call at %v", d.Sub(t0), now.Sub(t0))
				}
			}
			// And then the offer, not more.
			after := len(simulate(g, fc, time.Second, step))
			if w := tc.offer; math.Abs(float64(after)-w) > 1 {
				t.Errorf("admitted %d in the second after the burst, want %v within one token", after, w)
			}
		})
	}
}

func TestRateAcquireWaitsOnTheGateClock(t *testing.T) {
	g, fc := newFake(t, rateCfg(2))
	ctx := context.Background()
	if _, err := g.Acquire(ctx); err != nil { // the opening admission
		t.Fatal(err)
	}
	out := make(chan result, 1)
	acquireAsync(ctx, g, 0, out)
	waitFor(t, "the waiter to arm its timer", func() bool { return fc.Waiters() == 1 })
	fc.Advance(499 * time.Millisecond)
	noResult(t, out)
	if s := g.Stats(); s.Waiting != 1 || s.Admitted != 1 {
		t.Fatalf("stats before the due time = %+v, want 1 waiting, 1 admitted", s)
	}
	fc.Advance(time.Millisecond)
	r := recv(t, out)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := t0.Add(500 * time.Millisecond); !r.p.Due().Equal(want) {
		t.Errorf("Due = %v, want %v", r.p.Due().Sub(t0), want.Sub(t0))
	}
	if n := fc.Waiters(); n != 0 {
		t.Errorf("%d timers pending after Acquire returned, want 0", n)
	}
}

func TestRateCancelledWaiterConsumesNothing(t *testing.T) {
	g, fc := newFake(t, rateCfg(1), gate.WithBurst(0))
	drain(g)
	out := make(chan result, 10)
	cancels := make([]context.CancelFunc, 10)
	for i := range cancels {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		acquireAsync(ctx, g, i, out)
		waitFor(t, "waiter to queue", func() bool { return g.Stats().Waiting == int64(i+1) })
	}
	waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
	// Cancel the head and every other waiter: the even ids.
	for i := 0; i < 10; i += 2 {
		cancels[i]()
		r := recv(t, out)
		if !errors.Is(r.err, context.Canceled) || r.id != i {
			t.Fatalf("cancelled waiter %d: got id %d err %v", i, r.id, r.err)
		}
	}
	if s := g.Stats(); s.Waiting != 5 || s.Cancelled != 5 || s.Admitted != 1 {
		t.Fatalf("stats after cancelling = %+v, want 5 waiting, 5 cancelled, 1 admitted", s)
	}
	// The five left are admitted one a second, in order, from t = 1 s:
	// nothing the cancelled ones did consumed a token.
	for k := 1; k <= 5; k++ {
		waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
		fc.Advance(time.Second)
		r := recv(t, out)
		if r.err != nil || r.id != 2*k-1 {
			t.Fatalf("admission %d: id %d err %v, want id %d", k, r.id, r.err, 2*k-1)
		}
		if want := t0.Add(time.Duration(k) * time.Second); !r.p.Due().Equal(want) {
			t.Errorf("admission %d due %v, want %v", k, r.p.Due().Sub(t0), want.Sub(t0))
		}
	}
	for _, c := range cancels {
		c()
	}
	if s := g.Stats(); s.Waiting != 0 || s.Admitted != 6 || s.Cancelled != 5 {
		t.Errorf("final stats %+v, want 0 waiting, 6 admitted, 5 cancelled", s)
	}
	if n := fc.Waiters(); n != 0 {
		t.Errorf("%d timers left pending", n)
	}
}

func TestRateFIFOAndNoStarvation(t *testing.T) {
	g, fc := newFake(t, rateCfg(10), gate.WithBurst(0))
	drain(g)
	const n = 20
	out := make(chan result, 2*n)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		acquireAsync(ctx, g, i, out)
		waitFor(t, "waiter to queue", func() bool { return g.Stats().Waiting == int64(i+1) })
	}
	// A steady stream of new arrivals: each step one more Acquire queues
	// and a TryAcquire probes. Neither may overtake the queue.
	next := n
	for want := 0; want < n; want++ {
		waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
		acquireAsync(ctx, g, next, out)
		next++
		waitFor(t, "the arrival to queue", func() bool { return g.Stats().Waiting == int64(n+1) })
		fc.Advance(100 * time.Millisecond)
		if _, ok := g.TryAcquire(); ok {
			t.Fatal("TryAcquire jumped the queue")
		}
		r := recv(t, out)
		if r.id != want || r.err != nil {
			t.Fatalf("admission %d went to waiter %d (err %v): not first come, first served", want, r.id, r.err)
		}
	}
	if s := g.Stats(); s.Waiting != n {
		t.Fatalf("waiting = %d, want the %d later arrivals", s.Waiting, n)
	}
	// The later arrivals, too, are served in their order.
	for want := n; want < 2*n; want++ {
		waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
		fc.Advance(100 * time.Millisecond)
		if r := recv(t, out); r.id != want {
			t.Fatalf("admission went to waiter %d, want %d", r.id, want)
		}
	}
}

func TestRateBurstOfWaitersAdmittedTogether(t *testing.T) {
	// Many waiters whose turns all come within one Advance are admitted by
	// that Advance, not one per wake-up of the head.
	// The head's timer fires at 1 ms but the head runs only after the
	// clock has reached 50 ms: as late as a real timer can be. A burst
	// window longer than that lets every turn that came be taken.
	g, fc := newFake(t, rateCfg(1000), gate.WithBurst(100*time.Millisecond))
	drain(g)
	out := make(chan result, 50)
	for i := 0; i < 50; i++ {
		acquireAsync(context.Background(), g, i, out)
	}
	waitFor(t, "50 waiters", func() bool { return g.Stats().Waiting == 50 })
	waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
	fc.Advance(50 * time.Millisecond)
	// The goroutines queued in an order of their own; the turns they got
	// are 1 ms, 2 ms, …, 50 ms, one each.
	got := make(map[time.Duration]bool)
	for i := 0; i < 50; i++ {
		r := recv(t, out)
		got[r.p.Due().Sub(t0)] = true
	}
	for k := 1; k <= 50; k++ {
		if !got[time.Duration(k)*time.Millisecond] {
			t.Errorf("no waiter was admitted for the turn due at %d ms", k)
		}
	}
	if n := fc.Waiters(); n != 0 {
		t.Errorf("%d timers left pending", n)
	}
}

func TestRateApplyWakesTheHead(t *testing.T) {
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 0.1, Ceiling: 100, Offer: 0.1})
	drain(g) // next due in 10 s
	out := make(chan result, 1)
	acquireAsync(context.Background(), g, 0, out)
	waitFor(t, "the head to arm its timer", func() bool { return fc.Waiters() == 1 })
	g.Apply(100) // 1 token in 10 s left = 10 ms at 100/s
	fc.Advance(10 * time.Millisecond)
	r := recv(t, out)
	if want := t0.Add(10 * time.Millisecond); r.err != nil || !r.p.Due().Equal(want) {
		t.Fatalf("after raising the rate: due %v err %v, want due %v", r.p.Due().Sub(t0), r.err, want.Sub(t0))
	}
}
