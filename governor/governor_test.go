package governor

import (
	"bytes"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// counters is a host's cumulative attempt counters, set by the test.
type counters struct{ ok, failed atomic.Uint64 }

func (c *counters) Attempts() (uint64, uint64) { return c.ok.Load(), c.failed.Load() }
func (c *counters) add(ok, failed uint64)      { c.ok.Add(ok); c.failed.Add(failed) }

type harness struct {
	t       *testing.T
	g       *Governor
	c       *counters // the counters of newHarness
	lc      *fakeLoad // the counters of newLoadHarness
	now     time.Time
	windows []Window
	log     bytes.Buffer // movement lines, when a test logs into it
}

func newHarness(t *testing.T, l Limits, opts ...Option) *harness {
	t.Helper()
	h := &harness{c: &counters{}}
	return h.start(t, l, h.c, opts...)
}

// start builds the governor over c and commits the start offer at t0.
func (h *harness) start(t *testing.T, l Limits, c Counters, opts ...Option) *harness {
	t.Helper()
	h.t, h.now = t, t0
	// No settle span unless a test asks for one: these tests count attempts
	// from the confirmation on. No quick climb either: most of them are about
	// the full window's bookkeeping, and a clean window at a low offer would
	// otherwise close half a tick in (quick_test.go asks for it).
	opts = append([]Option{WithSettle(0), WithQuickClimb(false), WithLogger(slog.New(slog.DiscardHandler)), WithObserver(func(w Window) { h.windows = append(h.windows, w) })}, opts...)
	g, err := New(l, c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	ask, ok := g.Tick(h.now)
	if !ok || ask != l.Start {
		t.Fatalf("first Tick = %v, %v; want the start offer %v", ask, ok, l.Start)
	}
	g.Confirm(h.now, Confirmation{Origin: OriginGovernor, Asked: ask, Applied: ask})
	return h
}

func (h *harness) last() Window { return h.windows[len(h.windows)-1] }

// tick advances time by d and ticks once.
func (h *harness) tick(d time.Duration) (float64, bool) {
	h.now = h.now.Add(d)
	return h.g.Tick(h.now)
}

func (h *harness) confirm(v float64) {
	h.g.Confirm(h.now, Confirmation{Origin: OriginGovernor, Asked: v, Applied: v})
}

func testLimits() Limits {
	l := NewLimits(Rate, 1000)
	l.Window = 5 * time.Second
	return l
}

func TestTickJudgesOnlyAfterAFullWindow(t *testing.T) {
	h := newHarness(t, testLimits())
	for i := 0; i < 4; i++ {
		h.c.add(100, 0)
		if _, ok := h.tick(time.Second); ok {
			t.Fatalf("decided after %d s of a 5 s window", i+1)
		}
	}
	h.c.add(100, 0)
	ask, ok := h.tick(time.Second)
	if !ok || ask != 2 {
		t.Fatalf("window close: ask %v, %v; want slow start to 2", ask, ok)
	}
	w := h.windows[0]
	if w.OK != 500 || w.Failed != 0 || w.Offer != 1 || !w.Start.Equal(t0) || !w.End.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("window record %+v", w)
	}
	if w.Decision.Signal != SignalSlowStart || w.Decision.Kind != KindRaise {
		t.Fatalf("decision %+v", w.Decision)
	}
	// While the write is unconfirmed, no evidence is gathered or judged.
	h.c.add(0, 10000)
	for i := 0; i < 10; i++ {
		if _, ok := h.tick(time.Second); ok {
			t.Fatal("decided while a write was pending")
		}
	}
	if !h.g.State().Pending {
		t.Fatal("state does not show the pending write")
	}
	// The window restarts at the confirmation: the 10000 failures before it
	// are not evidence about the new offer.
	h.confirm(2)
	h.c.add(100, 0)
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 4 {
		t.Fatalf("after confirmation: ask %v, %v; want 4", ask, ok)
	}
	if w := h.windows[1]; w.OK != 100 || w.Failed != 0 || w.Offer != 2 {
		t.Fatalf("second window %+v", w)
	}
}

// After a confirmed change the attempts of the settle span (those sent at the
// old offer, a target still recovering) are not evidence about the new one.
func TestSettleDiscardsEvidenceRightAfterAChange(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l, WithSettle(time.Second))
	// The start confirmation began a settle span too: its attempts are dropped.
	h.c.add(0, 50)
	if _, ok := h.tick(time.Second); ok {
		t.Fatal("decided during the settle span")
	}
	h.c.add(100, 0)
	if ask, ok := h.tick(l.Window); !ok || ask != 2 {
		t.Fatalf("first window after settling: %v %v; want slow start on the clean evidence", ask, ok)
	}
	if w := h.windows[0]; w.OK != 100 || w.Failed != 0 || !w.Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("window %+v: want it to start when the settle span ended", w)
	}
	h.confirm(2)
	h.c.add(0, 1000) // the old offer's damage resolving after the change
	h.tick(500 * time.Millisecond)
	h.c.add(0, 1000)
	h.tick(500 * time.Millisecond) // the span ends here; the window starts
	h.c.add(200, 0)
	if ask, ok := h.tick(l.Window); !ok || ask != 4 {
		t.Fatalf("after a settle span: %v %v; want 4", ask, ok)
	}
	if _, err := New(l, h.c, WithSettle(-time.Second)); err == nil {
		t.Fatal("negative settle accepted")
	}
}

func TestSettleDefaultsToOneTick(t *testing.T) {
	g, _ := New(testLimits(), &counters{}, WithTick(250*time.Millisecond))
	if g.settle != 250*time.Millisecond {
		t.Fatalf("default settle %v, want the tick", g.settle)
	}
	g, _ = New(testLimits(), &counters{}, WithSettle(0), WithTick(time.Second))
	if g.settle != 0 {
		t.Fatalf("explicit settle 0 overridden: %v", g.settle)
	}
}

func TestWindowFractionIsTrailingNotLifetime(t *testing.T) {
	h := newHarness(t, testLimits())
	h.c.add(1000, 0)
	ask, _ := h.tick(5 * time.Second)
	h.confirm(ask)
	// A lifetime average would be 30/1030 < 5 %; the window's is 30 %.
	h.c.add(70, 30)
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask != 2*0.7 {
		t.Fatalf("ask %v, %v; want back-off to 1.4", ask, ok)
	}
	if h.windows[1].Frac != 0.3 {
		t.Fatalf("frac %v, want 0.3", h.windows[1].Frac)
	}
}

func TestNoEvidenceHold(t *testing.T) {
	h := newHarness(t, testLimits())
	h.c.add(19, 0) // one short of MinAttempts
	for i := 1; i < 20; i++ {
		if _, ok := h.tick(time.Second); ok {
			t.Fatalf("moved without evidence after %d s", i)
		}
		if len(h.windows) != 0 {
			t.Fatalf("window closed after %d s with too few attempts", i)
		}
	}
	h.tick(time.Second) // 20 s = 4 × window
	if len(h.windows) != 1 || h.windows[0].Decision.Signal != SignalNoEvidence || h.windows[0].Decision.Kind != KindHold {
		t.Fatalf("want one no-evidence hold, got %+v", h.windows)
	}
	if w := h.windows[0]; w.OK != 19 || !w.Start.Equal(t0) {
		t.Fatalf("hold record %+v", w)
	}
	// The hold kept the evidence: one more attempt completes the window, and
	// it is judged on all 20, from the same start.
	h.c.add(1, 0)
	ask, ok := h.tick(time.Second)
	if !ok || ask != 2 {
		t.Fatalf("after the hold: ask %v, %v; want slow start to 2", ask, ok)
	}
	if w := h.windows[1]; w.OK != 20 || !w.Start.Equal(t0) || w.Decision.Signal != SignalSlowStart {
		t.Fatalf("judged window %+v", w)
	}
	// A window that stays short reports a hold every 4 × window, no more.
	h.confirm(2)
	for i := 0; i < 40; i++ {
		h.tick(time.Second)
	}
	if len(h.windows) != 4 {
		t.Fatalf("40 s without attempts: %d records, want 2 more holds", len(h.windows))
	}
}

func TestNoEvidenceResetsStreak(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	h.g.mu.Lock()
	h.g.offer, h.g.lastBad, h.g.streak = 100, 100, 2
	h.g.mu.Unlock()
	h.tick(4 * l.Window)
	if st := h.g.State(); st.Streak != 0 || st.LastBad != 100 {
		t.Fatalf("no-evidence window left streak %d lastBad %v", st.Streak, st.LastBad)
	}
}

func TestMemoryClearsAfterStreakThenDoublingResumes(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	// Climb to 8, then breach at 8 with 50 % failures.
	for _, want := range []float64{2, 4, 8} {
		h.c.add(100, 0)
		ask, _ := h.tick(l.Window)
		if ask != want {
			t.Fatalf("slow start asked %v, want %v", ask, want)
		}
		h.confirm(ask)
	}
	h.c.add(50, 50)
	ask, _ := h.tick(l.Window)
	if ask != 4 || h.g.State().LastBad != 8 {
		t.Fatalf("back-off asked %v lastBad %v", ask, h.g.State().LastBad)
	}
	h.confirm(ask)
	// Clean: 4 < 6 → safe climb to 6; 6 → probe 7; 7 → 8 (probe, below lastBad: no streak).
	for _, step := range []struct {
		ask    float64
		signal Signal
	}{{6, SignalSafeClimb}, {7, SignalProbe}, {8, SignalProbe}, {9, SignalProbe}, {10, SignalProbe}, {11, SignalMemoryCleared}, {22, SignalSlowStart}} {
		h.c.add(100, 0)
		ask, ok := h.tick(l.Window)
		last := h.windows[len(h.windows)-1]
		if !ok || ask != step.ask || last.Decision.Signal != step.signal {
			t.Fatalf("asked %v (%v) signal %v; want %v signal %v (streak %d)", ask, ok, last.Decision.Signal, step.ask, step.signal, last.Streak)
		}
		h.confirm(ask)
	}
	if st := h.g.State(); st.LastBad != 0 {
		t.Fatalf("memory not cleared: %+v", st)
	}
}

func TestConfirmedValueDifferentFromAskedIsCommitted(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	h.c.add(100, 0)
	ask, _ := h.tick(l.Window)
	// The gate clamps 2 to 1.5 (its own limit, say).
	h.g.Confirm(h.now, Confirmation{Origin: OriginGovernor, Asked: ask, Applied: 1.5})
	h.c.add(100, 0)
	ask, _ = h.tick(l.Window)
	if ask != 3 || h.windows[1].Offer != 1.5 {
		t.Fatalf("next decision from %v asked %v; want judged at 1.5 asking 3", h.windows[1].Offer, ask)
	}
}

func TestUserWriteIsAdoptedAndRebaselines(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	h.c.add(100, 0)
	h.tick(3 * time.Second)
	// A user sets 50 mid-window; the 100 attempts before it are not evidence.
	h.g.Confirm(h.now, Confirmation{Origin: OriginUser, Asked: 50, Applied: 50})
	h.c.add(90, 10)
	ask, ok := h.tick(l.Window)
	w := h.windows[0]
	if !ok || w.Offer != 50 || w.OK != 90 || w.Failed != 10 || ask != 45 {
		t.Fatalf("after a user write: window %+v ask %v", w, ask)
	}
	// A user write while the governor's own write is pending supersedes it.
	h.g.Confirm(h.now, Confirmation{Origin: OriginUser, Asked: 20, Applied: 20})
	if st := h.g.State(); st.Pending || st.Offer != 20 {
		t.Fatalf("state after superseding user write: %+v", st)
	}
}

func TestCountersGoingBackwardsRestartTheWindow(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	h.c.add(100, 0)
	h.tick(time.Second)
	h.c.ok.Store(0) // a host reset its counters
	if _, ok := h.tick(l.Window); ok {
		t.Fatal("judged a window whose counters went backwards")
	}
	h.c.add(100, 0)
	if ask, ok := h.tick(l.Window); !ok || ask != 2 {
		t.Fatalf("after restart: %v %v", ask, ok)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(Limits{}, &counters{}); err == nil {
		t.Fatal("zero limits accepted")
	}
	if _, err := New(testLimits(), nil); err == nil {
		t.Fatal("nil counters accepted")
	}
	if _, err := New(testLimits(), &counters{}, WithTick(0)); err == nil {
		t.Fatal("zero tick accepted")
	}
}
