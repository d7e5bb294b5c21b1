package governor

import (
	"testing"
	"time"
)

// oneRead is one read of Run's (a fifth of the default 1 s tick).
const oneRead = 200 * time.Millisecond

// newQuickHarness is newHarness with the quick climb on, as New has it.
func newQuickHarness(t *testing.T, l Limits, opts ...Option) *harness {
	t.Helper()
	return newHarness(t, l, append([]Option{WithQuickClimb(true)}, opts...)...)
}

// A robust target at the floor, rate mode: a clean window closes a tick in,
// once it holds a tick's attempts at the offer (one at 1/s, at most
// MinAttempts), and the offer doubles; before that it waits. From 1/s the
// offer reaches a 3000/s ceiling in twelve one-tick windows.
func TestQuickClimbDoublesOnATickOfCleanEvidence(t *testing.T) {
	l := testLimits()
	l.Ceiling = 3000
	h := newQuickHarness(t, l)
	for i := 1; i <= 3; i++ {
		if _, ok := h.tick(oneRead); ok {
			t.Fatalf("closed %v in", time.Duration(i)*oneRead)
		}
	}
	h.c.add(1, 0)
	if _, ok := h.tick(oneRead); ok {
		t.Fatal("closed 800 ms in: less than a tick")
	}
	ask, ok := h.tick(oneRead)
	if !ok || ask != 2 {
		t.Fatalf("offer 1, one clean attempt, a tick in: ask %v %v, want the slow start to 2", ask, ok)
	}
	if w := h.last(); !w.Quick || w.Decision.Signal != SignalSlowStart || w.End.Sub(w.Start) != time.Second {
		t.Fatalf("window %+v: want a quick slow-start window of 1 s", w)
	}
	offer, elapsed := 2.0, time.Second
	h.confirm(offer)
	for offer < l.Ceiling {
		h.c.add(uint64(offer), 0) // a tick at the offer
		ask, ok := h.tick(5 * oneRead)
		elapsed += 5 * oneRead
		if !ok || ask != min(2*offer, l.Ceiling) {
			t.Fatalf("offer %v after a clean tick: ask %v %v, want %v", offer, ask, ok, min(2*offer, l.Ceiling))
		}
		offer = ask
		h.confirm(offer)
	}
	if elapsed != 12*time.Second {
		t.Fatalf("1 → 3000/s took %v, want twelve one-tick windows", elapsed)
	}
}

// A tick at 300/s brings 300 attempts; the quick climb needs MinAttempts of
// them. At 7/s it needs 7. A window a tick old without them waits.
func TestQuickClimbNeedsATicksAttemptsUpToMinAttempts(t *testing.T) {
	l := testLimits()
	l.Start = 300
	h := newQuickHarness(t, l)
	if n := h.g.quickNeed(300); n != l.MinAttempts {
		t.Fatalf("quickNeed(300) = %d, want MinAttempts %d", n, l.MinAttempts)
	}
	if n := h.g.quickNeed(7); n != 7 {
		t.Fatalf("quickNeed(7) = %d, want 7", n)
	}
	if n := h.g.quickNeed(0.5); n != 1 {
		t.Fatalf("quickNeed(0.5) = %d, want 1", n)
	}
	h.c.add(19, 0)
	if _, ok := h.tick(5 * oneRead); ok {
		t.Fatal("closed on 19 attempts")
	}
	h.c.add(1, 0)
	if ask, ok := h.tick(oneRead); !ok || ask != 600 {
		t.Fatalf("20 clean attempts: ask %v %v, want 600", ask, ok)
	}
}

// In concurrency mode the quick climb spends two ticks at each level: a
// closed loop makes fewer attempts for its offer.
func TestQuickClimbSpansTwoTicksInConcurrencyMode(t *testing.T) {
	l := NewLimits(Concurrency, 1000)
	l.Start = 8
	h := newQuickHarness(t, l)
	h.c.add(8, 0)
	if _, ok := h.tick(5 * oneRead); ok {
		t.Fatal("concurrency mode: closed a tick in")
	}
	h.c.add(8, 0)
	if ask, ok := h.tick(5 * oneRead); !ok || ask != 16 || !h.last().Quick {
		t.Fatalf("concurrency mode, two clean ticks: ask %v %v, want 16", ask, ok)
	}
}

// Any damage in the window (here one failure in 100, at the low bound, so
// the full window is still clean) keeps it open for its full length: only
// clean evidence is judged early.
func TestQuickClimbWaitsOnAnyDamage(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newQuickHarness(t, l)
	h.c.add(99, 1)
	for i := 1; i < 24; i++ {
		if _, ok := h.tick(oneRead); ok {
			t.Fatalf("a window with a failure closed after %v", time.Duration(i)*oneRead)
		}
	}
	if ask, ok := h.tick(2 * oneRead); !ok || ask != 200 || h.last().Quick {
		t.Fatalf("full window at 1 %%: ask %v %v (quick %v), want the slow start after 5 s", ask, ok, h.last().Quick)
	}
}

// With congestion memory the quick climb covers the safe climb (far below
// last-bad) but not the additive probes near it, nor the streak that clears
// the memory: those wait for the full window and MinAttempts.
func TestQuickClimbOnlyForMultiplicativeClimbs(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newQuickHarness(t, l)
	h.c.add(50, 50) // 50 % at 100: back-off to 50, last-bad 100
	ask, ok := h.tick(oneRead)
	if !ok || ask != 50 || !h.last().Early {
		t.Fatalf("breach: ask %v %v, want an early back-off to 50", ask, ok)
	}
	h.confirm(50)
	h.c.add(50, 0)
	if ask, ok := h.tick(5 * oneRead); !ok || ask != 75 || h.last().Decision.Signal != SignalSafeClimb {
		t.Fatalf("safe climb: ask %v %v (%v), want 75 a tick in", ask, ok, h.last().Decision.Signal)
	}
	h.confirm(75) // at 0.75 × last-bad: the next climb is a probe
	h.c.add(300, 0)
	for i := 1; i < 24; i++ {
		if _, ok := h.tick(oneRead); ok {
			t.Fatalf("a probe window closed after %v", time.Duration(i)*oneRead)
		}
	}
	if ask, ok := h.tick(2 * oneRead); !ok || ask != 77 {
		t.Fatalf("probe: ask %v %v, want 75 + 2 after the full window", ask, ok)
	}
}

// A window short of MinAttempts at its full length is judged on a breach
// beyond doubt (the exact binomial test at the early breach's level): four
// failures in five are one, one in five is not, and that window keeps
// collecting as before.
func TestClearBreachOnFewAttempts(t *testing.T) {
	l := testLimits()
	l.Start = 4
	h := newQuickHarness(t, l, WithEarlyBreach(false))
	h.c.add(1, 4)
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask != 1 || !h.last().Quick || h.last().Decision.Signal != SignalBackoff {
		t.Fatalf("4 of 5 failed: ask %v %v (%+v), want the back-off to 4 × 0.25 = 1", ask, ok, h.last())
	}
	h2 := newQuickHarness(t, l, WithEarlyBreach(false))
	h2.c.add(4, 1)
	if _, ok := h2.tick(5 * time.Second); ok || len(h2.windows) != 0 {
		t.Fatalf("1 of 5 failed decided the window: %+v", h2.windows)
	}
}

// After a raise nothing is discarded: the next window starts at the
// confirmation. After a back-off the settle span stays.
func TestQuickClimbDoesNotSettleAfterARaise(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newQuickHarness(t, l, WithSettle(time.Second))
	h.tick(time.Second) // the start's settle span
	h.c.add(100, 0)
	if ask, ok := h.tick(5 * oneRead); !ok || ask != 200 {
		t.Fatalf("ask %v %v, want 200", ask, ok)
	}
	h.confirm(200)
	h.c.add(200, 0)
	if ask, ok := h.tick(5 * oneRead); !ok || ask != 400 {
		t.Fatalf("after a raise: ask %v %v, want 400 a tick after the confirmation", ask, ok)
	}
	if w := h.last(); !w.Start.Equal(h.now.Add(-time.Second)) {
		t.Fatalf("window started %v, want at the confirmation", w.Start)
	}
	h.confirm(400)
	h.c.add(100, 100) // a breach: back-off
	ask, ok := h.tick(oneRead)
	if !ok || ask != 200 {
		t.Fatalf("breach at 400: ask %v %v, want 200", ask, ok)
	}
	h.confirm(200)
	h.c.add(0, 500) // the old offer's damage, within the tick of settling
	if _, ok := h.tick(4 * oneRead); ok {
		t.Fatal("judged inside the settle span after a back-off")
	}
}

// A quick window's latency counts: it sets the baseline, and a climb into a
// queue (latency doubled at twice the VUs, no think time) is not quick: the
// window waits for its full length and the latency knee backs off.
func TestQuickClimbStopsAtAQueue(t *testing.T) {
	h := newLoadHarness(t, loadConcLimits(2), WithQuickClimb(true))
	h.lc.serve(400, 0, 10*time.Millisecond, 0, 0) // 2 ticks at 2 VUs, 10 ms each
	ask, ok := h.tick(10 * oneRead)
	if !ok || ask != 4 || !h.last().Quick || h.last().Baseline != 10*time.Millisecond {
		t.Fatalf("2 VUs: ask %v %v window %+v, want a quick slow start setting a 10 ms baseline", ask, ok, h.last())
	}
	h.confirm(4)
	h.lc.serve(400, 0, 20*time.Millisecond, 0, 0)
	if _, ok := h.tick(10 * oneRead); ok {
		t.Fatalf("4 VUs at twice the latency: the quick climb decided %+v", h.last())
	}
	h.lc.serve(600, 0, 20*time.Millisecond, 0, 0)
	ask, ok = h.tick(15 * oneRead)
	if w := h.last(); !ok || ask != 2 || w.Quick || w.By != "latency" {
		t.Fatalf("full window: ask %v %v window %+v, want the latency back-off to 2", ask, ok, w)
	}
}

// Unless it is given, the quick climb follows the early breach, so
// WithEarlyBreach(false) alone (the CLI's --early-breach=false) is the
// seed's exact cadence.
func TestQuickClimbFollowsTheEarlyBreach(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want bool
	}{
		{nil, true},
		{[]Option{WithEarlyBreach(false)}, false},
		{[]Option{WithEarlyBreach(false), WithQuickClimb(true)}, true},
		{[]Option{WithQuickClimb(false), WithEarlyBreach(true)}, false},
	} {
		g, err := New(testLimits(), &counters{}, c.opts...)
		if err != nil || g.quick != c.want {
			t.Fatalf("%d options: quick %v (%v), want %v", len(c.opts), g.quick, err, c.want)
		}
	}
}

// A tick finer than a fifth of the window reads more often but does not
// shorten the quick climb: a 400 ms window read every 25 ms still gives a
// clean climb 80 ms (160 ms in concurrency mode) for damage to show.
func TestQuickClimbLastsAFifthOfTheWindowAtLeast(t *testing.T) {
	l := testLimits()
	l.Window, l.Start = 400*time.Millisecond, 100
	h := newQuickHarness(t, l, WithTick(25*time.Millisecond))
	if got := h.g.quickSpan(); got != 80*time.Millisecond {
		t.Fatalf("quick span %v, want 80ms", got)
	}
	h.c.add(50, 0)
	if _, ok := h.tick(25 * time.Millisecond); ok {
		t.Fatal("closed a tick in, at a fifteenth of the window")
	}
	h.tick(25 * time.Millisecond)
	if ask, ok := h.tick(30 * time.Millisecond); !ok || ask != 200 {
		t.Fatalf("80 ms in: ask %v %v, want 200", ask, ok)
	}
	l.Mode = Concurrency
	if g, _ := New(l, &counters{}, WithTick(25*time.Millisecond)); g.quickSpan() != 160*time.Millisecond {
		t.Fatalf("concurrency mode: quick span %v, want 160ms", g.quickSpan())
	}
}

// Shortest is the quick climb's span with it on, the full window with it
// off.
func TestShortest(t *testing.T) {
	l := NewLimits(Concurrency, 100)
	if g, _ := New(l, &counters{}); g.Shortest() != 2*time.Second {
		t.Fatalf("quick climb on: shortest %v, want two ticks (2 s)", g.Shortest())
	}
	if g, _ := New(l, &counters{}, WithQuickClimb(false)); g.Shortest() != l.Window {
		t.Fatalf("quick climb off: shortest %v, want the window %v", g.Shortest(), l.Window)
	}
}
