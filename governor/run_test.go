package governor

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
)

func TestMovementLogLine(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := NewLimits(Rate, 1000)
	l.Start = 400
	h := newHarness(t, l, WithLogger(logger), WithPhase("main"))
	h.c.add(2426, 5)
	h.tick(l.Window)
	line := buf.String()
	for _, want := range []string{"msg=throttle", "phase=main", "offer=400→800", "signal=slow-start", "frac=0.206%", "low=1%", "high=5%", "attempts=2431", "last_bad=0", "streak=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q lacks %q", line, want)
		}
	}
	// Holds are debug: invisible at info.
	buf.Reset()
	h.confirm(800)
	h.c.add(970, 30)
	h.tick(l.Window)
	if buf.Len() != 0 {
		t.Fatalf("a dead-band hold logged at info: %q", buf.String())
	}
}

// slowApplier blocks in Apply until released, like a gate behind a slow
// remote control plane.
type slowApplier struct {
	entered chan float64
	release chan struct{}
}

func (a *slowApplier) Apply(v float64) float64 {
	a.entered <- v
	<-a.release
	return v
}

// The loop never blocks on the control path: while Apply is stuck, Set
// returns, the loop keeps serving State and stops on cancel.
func TestRunNeverBlocksOnASlowApplier(t *testing.T) {
	before := runtime.NumGoroutine()
	a := &slowApplier{entered: make(chan float64, 16), release: make(chan struct{})}
	ctl := NewControl(a)
	fc := clock.NewFake(t0)
	c := &counters{}
	g, err := New(testLimits(), c, WithClock(fc), WithTick(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, ctl) }()
	if v := <-a.entered; v != 1 {
		t.Fatalf("first apply %v, want the start offer 1", v)
	}
	// Apply is now stuck. Ticks keep coming; writers are never blocked.
	for i := 0; i < 50; i++ {
		fc.Advance(time.Second)
		ctl.Set(OriginUser, float64(i+2))
	}
	if !g.State().Pending {
		t.Fatal("governor should still wait for its confirmation")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop while the applier was stuck")
	}
	close(a.release) // let the stuck apply and the coalesced newest write finish
	if v := <-a.entered; v != 51 {
		t.Fatalf("after the stuck apply, the newest write should be applied; got %v", v)
	}
	ctl.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines leaked: %d before, %d after", before, n)
	}
	if last, ok := ctl.Last(); !ok || last.Applied != 51 || last.Origin != OriginUser {
		t.Fatalf("the newest write should win: %+v", last)
	}
}

// End to end on the control path with a fake clock: Run asks, the Control
// applies, Run adopts the confirmation and judges the next window.
func TestRunEndToEndWithControl(t *testing.T) {
	var mu sync.Mutex
	var applied []float64
	ctl := NewControl(ApplierFunc(func(v float64) float64 {
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, v)
		return v
	}))
	defer ctl.Close()
	fc := clock.NewFake(t0)
	c := &counters{}
	l := testLimits()
	g, _ := New(l, c, WithClock(fc), WithTick(time.Second), WithLogger(slog.New(slog.DiscardHandler)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Run(ctx, ctl)
	waitFor := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out; state %+v", g.State())
			}
			time.Sleep(time.Millisecond)
		}
	}
	for _, want := range []float64{1, 2, 4} {
		waitFor(func() bool { return g.State().Offer == want && !g.State().Pending })
		// Tick until the window closes and the next offer is confirmed. A tick
		// the loop has not read yet is dropped, as with time.Ticker, so keep
		// ticking rather than counting ticks. The target serves 20 clean
		// attempts a second (the first tick after each change settles).
		waitFor(func() bool {
			c.add(20, 0)
			fc.Advance(time.Second)
			time.Sleep(time.Millisecond)
			return g.State().Offer == 2*want
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(applied) != 4 || applied[3] != 8 {
		t.Fatalf("applied %v, want [1 2 4 8]", applied)
	}
}

// Start runs the loop on its own goroutine; stop ends it, closes the
// control, and may be called again.
func TestStartAndStop(t *testing.T) {
	before := runtime.NumGoroutine()
	applied := make(chan float64, 1)
	g, _ := New(testLimits(), &counters{}, WithLogger(slog.New(slog.DiscardHandler)))
	_, stop := g.Start(ApplierFunc(func(v float64) float64 {
		select {
		case applied <- v:
		default:
		}
		return v
	}))
	if v := <-applied; v != 1 {
		t.Fatalf("first apply %v, want the start offer 1", v)
	}
	stop()
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines leaked: %d before, %d after", before, n)
	}
}
