package governor

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
)

func TestDefaultTickFollowsTheWindow(t *testing.T) {
	for _, c := range []struct{ window, want time.Duration }{
		{5 * time.Second, time.Second},
		{10 * time.Second, time.Second},
		{time.Second, 200 * time.Millisecond},
		{250 * time.Millisecond, 50 * time.Millisecond},
		{3 * time.Nanosecond, 3 * time.Nanosecond},
	} {
		if got := DefaultTickFor(c.window); got != c.want {
			t.Errorf("DefaultTickFor(%v) = %v, want %v", c.window, got, c.want)
		}
		l := testLimits()
		l.Window = c.window
		g, err := New(l, &counters{})
		if err != nil {
			t.Fatal(err)
		}
		if g.tick != c.want || g.settle != c.want {
			t.Errorf("window %v: governor tick %v settle %v, want both %v", c.window, g.tick, g.settle, c.want)
		}
	}
	// An explicit tick wins, whatever the window.
	if g, _ := New(testLimits(), &counters{}, WithTick(3*time.Second)); g.tick != 3*time.Second {
		t.Fatalf("explicit tick overridden: %v", g.tick)
	}
}

// A tick within half a tick of the window's end closes it; End − Start is
// what the window covered. A tick earlier than that does not.
func TestWindowClosesWithinHalfATickOfItsEnd(t *testing.T) {
	l := testLimits() // 5 s window, default tick 1 s
	h := newHarness(t, l)
	h.c.add(100, 0)
	if _, ok := h.tick(4400 * time.Millisecond); ok {
		t.Fatal("closed 0.6 s (more than half a tick) before the window's end")
	}
	ask, ok := h.tick(200 * time.Millisecond) // 4.6 s: within half a tick
	if !ok || ask != 2 {
		t.Fatalf("at 4.6 s of a 5 s window: ask %v %v, want the window closed (slow start to 2)", ask, ok)
	}
	if w := h.windows[0]; w.End.Sub(w.Start) != 4600*time.Millisecond {
		t.Fatalf("window covered %v, want the 4.6 s it really spanned", w.End.Sub(w.Start))
	}
}

// gatedApplier applies only when released, so a test can move the fake clock
// between a decision and its confirmation.
type gatedApplier struct{ entered, release chan float64 }

func (a gatedApplier) Apply(v float64) float64 { a.entered <- v; return <-a.release }

// Run schedules its ticks from each confirmation: the settle span (one tick)
// ends on a tick, and the window it starts closes exactly its duration later.
// On the seed's free-running ticker the confirmation at 6.4 s would have
// started the window at 8 s (the first tick after 7.4 s), 1.6 s after the
// change instead of one tick.
func TestRunSchedulesTicksFromTheConfirmation(t *testing.T) {
	fc := clock.NewFake(t0)
	c := &readCounters{reads: make(chan struct{}, 64)}
	closed := make(chan Window, 16)
	a := gatedApplier{entered: make(chan float64, 4), release: make(chan float64)}
	ctl := NewControl(a)
	defer ctl.Close()
	defer close(a.release) // an apply still waiting returns, so Close can finish
	g, err := New(testLimits(), c, WithClock(fc), WithLogger(slog.New(slog.DiscardHandler)),
		WithObserver(func(w Window) { closed <- w }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Run(ctx, ctl)
	release := func(v float64) {
		t.Helper()
		a.release <- v
		waitUntil(t, func() bool { st := g.State(); return !st.Pending && st.Offer == v })
		for len(c.reads) > 0 { // Confirm's own read of the counters
			<-c.reads
		}
	}
	// tickUntil advances one tick at a time, adding 100 clean attempts
	// before each, until a window closes. Each tick is waited for (its read
	// of the counters, then its lock via State), so none is dropped.
	tickUntil := func() Window {
		t.Helper()
		for i := 0; i < 20; i++ {
			c.add(100, 0)
			before := g.State().Windows
			fc.Advance(time.Second)
			<-c.reads
			if g.State().Windows > before {
				return <-closed
			}
		}
		t.Fatal("no window closed in 20 ticks")
		return Window{}
	}
	if got := <-a.entered; got != 1 {
		t.Fatalf("asked %v, want the start offer 1", got)
	}
	release(1) // at t0: settle until t0+1 s
	w := tickUntil()
	if !w.Start.Equal(t0.Add(time.Second)) || !w.End.Equal(t0.Add(6*time.Second)) {
		t.Fatalf("first window %v → %v, want 1 s → 6 s", w.Start.Sub(t0), w.End.Sub(t0))
	}
	// The decision at 6 s is applied only at 6.4 s.
	if got := <-a.entered; got != 2 {
		t.Fatalf("asked %v, want 2", got)
	}
	fc.Advance(400 * time.Millisecond)
	release(2)
	w = tickUntil()
	if want := t0.Add(7400 * time.Millisecond); !w.Start.Equal(want) {
		t.Fatalf("window after a change confirmed at 6.4 s starts at %v, want 7.4 s (one settle span)", w.Start.Sub(t0))
	}
	if d := w.End.Sub(w.Start); d != 5*time.Second {
		t.Fatalf("window covered %v, want exactly 5 s", d)
	}
}

// readCounters are counters that signal every read, so a test can wait for
// the governor's loop to have taken a tick.
type readCounters struct {
	counters
	reads chan struct{}
}

func (c *readCounters) Attempts() (uint64, uint64) {
	ok, failed := c.counters.Attempts()
	c.reads <- struct{}{}
	return ok, failed
}

// waitUntil polls cond: the loop under test runs on its own goroutine, and
// the fake clock only moves when the test says so, so the timeline stays
// exact however long the wait.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the governor's loop")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestEarlyBreachBacksOffAtATickInsideTheWindow(t *testing.T) {
	var buf bytes.Buffer
	l := testLimits()
	l.Start = 100
	h := newHarness(t, l, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	h.c.add(60, 40) // 40 % failed after one tick of five
	ask, ok := h.tick(time.Second)
	if !ok || ask != 60 {
		t.Fatalf("gross breach after 1 s: ask %v %v, want the seed's back-off 100 × 0.6 = 60 at once", ask, ok)
	}
	w := h.windows[0]
	if !w.Early || w.Decision.Signal != SignalBackoff || w.Decision.LastBad != 100 || w.End.Sub(w.Start) != time.Second || w.Frac != 0.4 {
		t.Fatalf("early window %+v", w)
	}
	if line := buf.String(); !strings.Contains(line, "signal=back-off") || !strings.Contains(line, "early=true") || !strings.Contains(line, "offer=100→60") {
		t.Fatalf("movement line %q does not say the back-off was early", line)
	}
	if st := h.g.State(); st.LastBad != 100 || !st.Pending {
		t.Fatalf("state after an early breach %+v", st)
	}
}

func TestEarlyBreachNeedsConfidenceAndMinAttempts(t *testing.T) {
	l := testLimits()
	l.Start = 100
	for _, c := range []struct {
		name       string
		ok, failed uint64
	}{
		{"marginal: 6 % of 1000, lower bound below 5 %", 940, 60},
		{"too few: 19 failures of 19", 0, 19},
		{"clean", 1000, 0},
		{"dead band", 970, 30},
	} {
		h := newHarness(t, l)
		h.c.add(c.ok, c.failed)
		for i := 1; i <= 4; i++ {
			if _, ok := h.tick(time.Second); ok || len(h.windows) != 0 {
				t.Fatalf("%s: decided at %d s of a 5 s window", c.name, i)
			}
		}
	}
	// The marginal breach is judged at the full window, not early.
	h := newHarness(t, l)
	h.c.add(940, 60)
	for i := 0; i < 5; i++ {
		h.tick(time.Second)
	}
	if len(h.windows) != 1 || h.windows[0].Early || h.windows[0].Decision.Signal != SignalBackoff || h.windows[0].End.Sub(h.windows[0].Start) != 5*time.Second {
		t.Fatalf("marginal breach: windows %+v, want one full-length back-off", h.windows)
	}
}

// A breach at the floor cannot move the offer, so it waits for the full
// window like any hold instead of closing a window at every tick.
func TestEarlyBreachAtTheFloorWaitsForTheFullWindow(t *testing.T) {
	h := newHarness(t, testLimits()) // start = floor = 1
	h.c.add(0, 100)
	for i := 1; i <= 4; i++ {
		if h.tick(time.Second); len(h.windows) != 0 {
			t.Fatalf("closed at %d s at the floor", i)
		}
	}
	h.tick(time.Second)
	if len(h.windows) != 1 || h.windows[0].Early || h.windows[0].Decision.Signal != SignalAtFloor {
		t.Fatalf("windows %+v, want one full at-floor hold", h.windows)
	}
}

func TestEarlyBreachOffGivesTheSeedsCadence(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newHarness(t, l, WithEarlyBreach(false))
	h.c.add(0, 1000)
	for i := 1; i <= 4; i++ {
		if _, ok := h.tick(time.Second); ok {
			t.Fatalf("early breach switched off, yet decided at %d s", i)
		}
	}
	ask, ok := h.tick(time.Second)
	if !ok || ask != 25 || h.windows[0].Early {
		t.Fatalf("at the full window: ask %v %v window %+v, want the full-window back-off to 25", ask, ok, h.windows[0])
	}
}

func TestWilsonLowerBound(t *testing.T) {
	for _, c := range []struct {
		failed, n uint64
		lo, hi    float64
	}{
		{0, 100, 0, 1e-12},
		{100, 100, 0.93, 0.94}, // z²/(n+z²) from the top
		{40, 100, 0.28, 0.29},
		{60, 1000, 0.043, 0.044},
	} {
		if got := wilsonLower(c.failed, c.n); got < c.lo || got > c.hi {
			t.Errorf("wilsonLower(%d, %d) = %v, want in [%v, %v]", c.failed, c.n, got, c.lo, c.hi)
		}
	}
}
