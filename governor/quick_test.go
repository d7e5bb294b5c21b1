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

// A robust target at the floor: a clean window closes half a tick in, once
// it holds the attempts half a tick at the offer brings (one at 1/s), and
// the offer doubles; before half a tick, or with no attempt, it waits.
func TestQuickClimbDoublesOnHalfATickOfCleanEvidence(t *testing.T) {
	l := testLimits() // rate, ceiling 1000, 5 s window, tick 1 s
	h := newQuickHarness(t, l)
	if _, ok := h.tick(oneRead); ok {
		t.Fatal("closed a fifth of a tick in")
	}
	h.tick(oneRead) // 400 ms: nothing resolved yet
	if _, ok := h.tick(oneRead); ok {
		t.Fatal("closed with no attempt resolved")
	}
	h.c.add(1, 0)
	ask, ok := h.tick(oneRead) // 800 ms, one clean attempt
	if !ok || ask != 2 {
		t.Fatalf("offer 1, one clean attempt at 800 ms: ask %v %v, want the slow start to 2", ask, ok)
	}
	if w := h.last(); !w.Quick || w.Decision.Signal != SignalSlowStart || w.End.Sub(w.Start) != 800*time.Millisecond {
		t.Fatalf("window %+v: want a quick slow-start window of 800 ms", w)
	}
	// From offer 1 to the ceiling (1000/s) takes ten doublings, each on half
	// a tick of the offer's attempts: a few seconds, not minutes.
	offer := 2.0
	h.confirm(offer)
	elapsed := time.Duration(0)
	for offer < l.Ceiling {
		h.c.add(uint64(offer*quickSpan)+1, 0)
		ask, ok := h.tick(3 * oneRead)
		elapsed += 3 * oneRead
		if !ok || ask != min(2*offer, l.Ceiling) {
			t.Fatalf("offer %v after 600 ms of clean evidence: ask %v %v, want %v", offer, ask, ok, min(2*offer, l.Ceiling))
		}
		offer = ask
		h.confirm(offer)
	}
	if elapsed > 6*time.Second {
		t.Fatalf("2 → ceiling took %v", elapsed)
	}
}

// Half a tick at 300/s brings 150 attempts; with MinAttempts 20 the quick
// climb needs 20 of them, not 150.
func TestQuickClimbNeedsAtMostMinAttempts(t *testing.T) {
	l := testLimits()
	l.Start = 300
	h := newQuickHarness(t, l)
	if n := h.g.quickNeed(300); n != l.MinAttempts {
		t.Fatalf("quickNeed(300) = %d, want MinAttempts %d", n, l.MinAttempts)
	}
	if n := h.g.quickNeed(7); n != 4 {
		t.Fatalf("quickNeed(7) = %d, want ceil(7 × 0.5) = 4", n)
	}
	h.c.add(19, 0)
	if _, ok := h.tick(3 * oneRead); ok {
		t.Fatal("closed on 19 attempts")
	}
	h.c.add(1, 0)
	if ask, ok := h.tick(oneRead); !ok || ask != 600 {
		t.Fatalf("20 clean attempts: ask %v %v, want 600", ask, ok)
	}
}

// Any damage in the window (here one failure in 100, at the low bound, so
// the full window would still be clean) keeps it open for its full length:
// only clean evidence is judged early.
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
	ask, ok := h.tick(5 * oneRead)
	if !ok || ask != 50 {
		t.Fatalf("breach: ask %v %v, want 50", ask, ok)
	}
	h.confirm(50)
	h.c.add(30, 0)
	if ask, ok := h.tick(3 * oneRead); !ok || ask != 75 || h.last().Decision.Signal != SignalSafeClimb {
		t.Fatalf("safe climb: ask %v %v (%v), want 75 half a tick in", ask, ok, h.last().Decision.Signal)
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
	h := newQuickHarness(t, l)
	h.c.add(1, 4)
	ask, ok := h.tick(25 * oneRead)
	if !ok || ask != 1 || !h.last().Quick || h.last().Decision.Signal != SignalBackoff {
		t.Fatalf("4 of 5 failed: ask %v %v (%+v), want the back-off to 4 × 0.25 = 1", ask, ok, h.last())
	}
	h2 := newQuickHarness(t, l)
	h2.c.add(4, 1)
	if _, ok := h2.tick(25 * oneRead); ok || len(h2.windows) != 0 {
		t.Fatalf("1 of 5 failed decided the window: %+v", h2.windows)
	}
}

// After a raise the settle span is one read, not a tick: the answers still
// arriving were sent at the lower offer. After a back-off it stays a tick.
func TestQuickClimbSettlesOneReadAfterARaise(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newQuickHarness(t, l, WithSettle(time.Second))
	h.tick(time.Second) // the start's settle span
	h.c.add(100, 0)
	if ask, ok := h.tick(3 * oneRead); !ok || ask != 200 {
		t.Fatalf("ask %v %v, want 200", ask, ok)
	}
	h.confirm(200)
	h.tick(oneRead) // the settle span ends here
	h.c.add(100, 0)
	if ask, ok := h.tick(3 * oneRead); !ok || ask != 400 {
		t.Fatalf("after a raise: ask %v %v, want 400 half a tick after one read of settling", ask, ok)
	}
	if w := h.last(); !w.Start.Equal(h.now.Add(-3 * oneRead)) {
		t.Fatalf("window started %v, want one read after the confirmation", w.Start)
	}
	h.confirm(400)
	h.tick(oneRead)
	h.c.add(100, 100) // a breach: back-off
	ask, ok := h.tick(5 * oneRead)
	if !ok || ask != 200 {
		t.Fatalf("breach at 400: ask %v %v, want 200", ask, ok)
	}
	h.confirm(200)
	h.c.add(0, 500) // the old offer's damage, within the tick of settling
	if _, ok := h.tick(4 * oneRead); ok {
		t.Fatal("judged inside the settle span after a back-off")
	}
}
