package governor

import (
	"context"
	"log/slog"
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

// A read within half a read of the window's end closes it; End − Start is
// what the window covered. A read earlier than that does not. With the
// early breach on, Run reads every fifth of a tick (200 ms), so the window
// closes within 100 ms of its end; with it off, once a tick, within 500 ms.
func TestWindowClosesWithinHalfAReadOfItsEnd(t *testing.T) {
	for _, c := range []struct {
		name          string
		opts          []Option
		before, after time.Duration
	}{
		{"early breach on", nil, 4850 * time.Millisecond, 4900 * time.Millisecond},
		{"early breach off", []Option{WithEarlyBreach(false)}, 4400 * time.Millisecond, 4600 * time.Millisecond},
	} {
		l := testLimits() // 5 s window, default tick 1 s
		h := newHarness(t, l, c.opts...)
		h.c.add(100, 0)
		if _, ok := h.tick(c.before); ok {
			t.Fatalf("%s: closed at %v, more than half a read before the window's end", c.name, c.before)
		}
		ask, ok := h.tick(c.after - c.before)
		if !ok || ask != 2 {
			t.Fatalf("%s: at %v of a 5 s window: ask %v %v, want the window closed (slow start to 2)", c.name, c.after, ask, ok)
		}
		if w := h.windows[0]; w.End.Sub(w.Start) != c.after {
			t.Fatalf("%s: window covered %v, want the %v it really spanned", c.name, w.End.Sub(w.Start), c.after)
		}
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
	g, err := New(testLimits(), c, WithClock(fc), WithLogger(slog.New(slog.DiscardHandler)), WithQuickClimb(false),
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
	// tickUntil advances one read (a fifth of a tick) at a time, adding 20
	// clean attempts before each, until a window closes. Each read is
	// waited for (its read of the counters, then its lock via State), so
	// none is dropped.
	tickUntil := func() Window {
		t.Helper()
		if g.Check() != 200*time.Millisecond {
			t.Fatalf("governor reads every %v, want 200 ms (a fifth of the 1 s tick)", g.Check())
		}
		for i := 0; i < 100; i++ {
			c.add(20, 0)
			before := g.State().Windows
			fc.Advance(g.Check())
			<-c.reads
			if g.State().Windows > before {
				return <-closed
			}
		}
		t.Fatal("no window closed in 100 reads")
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
