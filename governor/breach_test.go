package governor

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
)

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

// binomialTail and tailBelow against exact rational sums of the binomial
// pmf (Python's math.comb and fractions): the tail of Binomial(n, p) from
// k, and whether it is below a level, on both sides of it.
func TestBinomialTail(t *testing.T) {
	for _, c := range []struct {
		k, n   uint64
		p      float64
		lo, hi float64
	}{
		{21, 200, 0.05, 0.0011599, 0.0011600},     // 10.5 % of 200 at a true 5 %
		{10, 20, 0.05, 1.13407e-8, 1.13408e-8},    // half of 20
		{2, 2, 0.5, 0.2499, 0.2501},               // both of two coin flips
		{61, 1000, 0.05, 0.067062, 0.067063},      // 6.1 %, barely above: likely
		{120, 1000, 0.05, 2.6514e-18, 2.6515e-18}, // far out
	} {
		got := binomialTail(c.k, c.n, c.p)
		if got < c.lo || got > c.hi {
			t.Errorf("binomialTail(%d, %d, %v) = %g, want in [%g, %g]", c.k, c.n, c.p, got, c.lo, c.hi)
		}
		for _, alpha := range []float64{c.lo / 2, c.hi * 2} {
			if below := tailBelow(c.k, c.n, c.p, alpha); below != (alpha > c.hi) {
				t.Errorf("tailBelow(%d, %d, %v, %g) = %v, want %v (the tail is %g)", c.k, c.n, c.p, alpha, below, alpha > c.hi, got)
			}
		}
	}
	// At or below the mean nothing is a breach, whatever the level.
	for _, c := range []struct{ k, n uint64 }{{10, 200}, {0, 100}, {5, 200}} {
		if tailBelow(c.k, c.n, 0.05, 1) {
			t.Errorf("tailBelow(%d, %d, 0.05, 1) = true, want false (at or below the mean)", c.k, c.n)
		}
	}
}

// The early breach's level is corrected for how often a window looks:
// two looks a read, 1 % over all of them.
func TestEarlyLevelCorrectsForTheLooks(t *testing.T) {
	for _, c := range []struct {
		window, check time.Duration
		want          float64
	}{
		{5 * time.Second, time.Second, 0.001},             // 10 looks
		{5 * time.Second, 200 * time.Millisecond, 0.0002}, // 50 looks
		{time.Second, 40 * time.Millisecond, 0.0002},      // the same shape, shorter
		{10 * time.Second, 200 * time.Millisecond, 0.0001},
	} {
		if got := earlyLevel(c.window, c.check); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("earlyLevel(%v, %v) = %v, want %v", c.window, c.check, got, c.want)
		}
	}
	g, err := New(testLimits(), &counters{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Check() != 200*time.Millisecond || g.alpha != 0.0002 {
		t.Fatalf("default governor: check %v level %v, want 200ms and 0.0002 (50 looks)", g.Check(), g.alpha)
	}
	if g, _ := New(testLimits(), &counters{}, WithEarlyBreach(false)); g.Check() != time.Second {
		t.Fatalf("early breach off: check %v, want the tick (1 s)", g.Check())
	}
	// A fine tick is read at most every millisecond, and never less often
	// than once a tick.
	for _, c := range []struct{ tick, want time.Duration }{
		{2 * time.Millisecond, time.Millisecond},
		{time.Millisecond, time.Millisecond},
		{300 * time.Microsecond, 300 * time.Microsecond},
	} {
		if g, _ := New(testLimits(), &counters{}, WithTick(c.tick)); g.Check() != c.want {
			t.Errorf("tick %v: check %v, want %v", c.tick, g.Check(), c.want)
		}
	}
}

// When the target changes inside a window, the evidence before the change
// dilutes the window's fraction: here 40 failures of 3100 (1.3 %, not even a
// breach). The tail since the previous read alone breaches (40 of 100, the
// Wilson lower bound far above 5 %), so the window closes at once and the
// seed's back-off applies to the tail's 40 %: 100 × 0.6 = 60. The record
// still counts the whole window and says what the decision rested on.
func TestEarlyBreachJudgesTheWindowsTail(t *testing.T) {
	var buf bytes.Buffer
	l := testLimits()
	l.Start = 100
	h := newHarness(t, l, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	for i := 1; i <= 3; i++ {
		h.c.add(1000, 0)
		if _, ok := h.tick(time.Second); ok {
			t.Fatalf("clean tick %d closed the window", i)
		}
	}
	h.c.add(60, 40)
	ask, ok := h.tick(time.Second)
	if !ok || ask != 60 {
		t.Fatalf("tail 40 %% failed after 3 clean ticks: ask %v %v, want the back-off on the tail's fraction, 60", ask, ok)
	}
	w := h.windows[0]
	if !w.Early || w.Tail != time.Second || w.Frac != 0.4 || w.OK != 3060 || w.Failed != 40 || w.End.Sub(w.Start) != 4*time.Second || w.Decision.LastBad != 100 {
		t.Fatalf("window %+v, want an early back-off on the 1 s tail (frac 0.4) over the whole window's counts", w)
	}
	if line := buf.String(); !strings.Contains(line, "early=true") || !strings.Contains(line, "tail=1s") || !strings.Contains(line, "offer=100→60") {
		t.Fatalf("movement line %q does not say the back-off rested on the tail", line)
	}

	// The seed's cadence never looks at the tail: the same evidence waits
	// for the full window and backs off on its whole fraction.
	h = newHarness(t, l, WithEarlyBreach(false))
	for i := 1; i <= 3; i++ {
		h.c.add(1000, 0)
		h.tick(time.Second)
	}
	h.c.add(60, 40)
	h.tick(time.Second)
	h.c.add(60, 40)
	ask, ok = h.tick(time.Second)
	if w := h.windows[0]; ok || w.Early || w.Tail != 0 || w.Frac != 80.0/3200 || w.Decision.Signal != SignalDeadBand {
		t.Fatalf("seed cadence: ask %v %v window %+v, want a full-window dead-band hold on 80 of 3200", ask, ok, w)
	}
}

// A tail short of MinAttempts is no evidence of its own: the early breach
// then rests on the window so far, as before. Here the tail (1 failure of
// 5) would back off to 80, the window (10 of 20, 50 %) backs off to 50.
func TestEarlyBreachTailNeedsMinAttempts(t *testing.T) {
	l := testLimits()
	l.Start = 100
	h := newHarness(t, l)
	h.c.add(6, 9)
	if _, ok := h.tick(time.Second); ok {
		t.Fatal("decided on 15 attempts, fewer than MinAttempts")
	}
	h.c.add(4, 1)
	ask, ok := h.tick(time.Second)
	if w := h.windows[0]; !ok || ask != 50 || w.Tail != 0 || w.Frac != 0.5 {
		t.Fatalf("ask %v %v window %+v, want the window's own 50 %% back-off to 50", ask, ok, w)
	}
}

// A busy target is judged a fifth of a tick in: 200 ms of a breach at 1000/s
// holds 200 attempts, more than 5 × MinAttempts, and the window closes on the
// first read. A slow one waits for a whole tick: at 50/s, 10 attempts a
// read, the same 50 % breach is decided at 1 s, on 50 attempts, not on the
// 20 that MinAttempts alone would allow at 400 ms.
func TestEarlyBreachRestsOnAFifthOfATickOnlyWhenBusy(t *testing.T) {
	for _, c := range []struct {
		name       string
		start      float64
		okN, failN uint64 // per 200 ms read
		at         time.Duration
	}{
		{"busy", 1000, 100, 100, 200 * time.Millisecond},
		{"slow", 50, 5, 5, time.Second},
	} {
		l := testLimits()
		l.Start = c.start
		h := newHarness(t, l)
		var elapsed time.Duration
		for {
			h.c.add(c.okN, c.failN)
			elapsed += 200 * time.Millisecond
			ask, ok := h.tick(200 * time.Millisecond)
			if ok {
				if elapsed != c.at || ask != c.start/2 || !h.windows[0].Early {
					t.Fatalf("%s: decided at %v: ask %v, window %+v; want an early back-off to %v at %v", c.name, elapsed, ask, h.windows[0], c.start/2, c.at)
				}
				break
			}
			if elapsed > c.at {
				t.Fatalf("%s: no early breach by %v, want one at %v", c.name, elapsed, c.at)
			}
		}
	}
}

// When the evidence before the tail breached too, the target did not change
// inside the window: the whole window is the same breach on more evidence,
// so the back-off applies to its fraction, not to a tail that noise made
// worse. Here 1 s at 7 % failed (above high, but not yet with confidence),
// then a read at 30 %: the window's 1200 attempts hold 130 failures
// (10.8 %), and the back-off is to 89.2 % of the offer, where the tail's 30 %
// would have cut it to 70 %.
func TestEarlyBreachKeepsTheWindowWhenItBreachedAllAlong(t *testing.T) {
	l := testLimits()
	l.Start = 1000
	h := newHarness(t, l)
	h.c.add(930, 70)
	if _, ok := h.tick(time.Second); ok {
		t.Fatal("7 % failed of 1000 closed the window; want it short of confidence")
	}
	h.c.add(140, 60)
	ask, ok := h.tick(200 * time.Millisecond)
	if want := 1000 * (1 - 130.0/1200); !ok || math.Abs(ask-want) > 1e-9 {
		t.Fatalf("ask %v %v, want the back-off on the whole window's fraction to %v", ask, ok, want)
	}
	if w := h.windows[0]; !w.Early || w.Tail != 0 || w.Frac != 130.0/1200 {
		t.Fatalf("window %+v, want an early breach on the whole window's fraction", w)
	}
}

// The read that closes the window judges its tail first too: a target that
// halved in the window's last read would otherwise be judged on evidence
// mostly gathered before, back off a tenth and breach again.
func TestFullWindowJudgesItsTailFirst(t *testing.T) {
	l := testLimits()
	l.Start = 1000
	h := newHarness(t, l)
	for i := 0; i < 24; i++ {
		h.c.add(200, 0)
		if _, ok := h.tick(200 * time.Millisecond); ok {
			t.Fatalf("clean read %d closed the window", i)
		}
	}
	h.c.add(100, 100)
	ask, ok := h.tick(200 * time.Millisecond)
	if !ok || ask != 500 {
		t.Fatalf("last read 50 %% failed: ask %v %v, want the back-off on the tail's fraction, 500", ask, ok)
	}
	if w := h.windows[0]; w.Early || w.Tail != 200*time.Millisecond || w.Frac != 0.5 || w.End.Sub(w.Start) != 5*time.Second {
		t.Fatalf("window %+v, want the full window judged on its 200 ms tail", w)
	}
}
