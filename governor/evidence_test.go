package governor

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// fakeLoad is a host's LoadCounters, set by the test: resolved attempts,
// started (in flight = started − resolved), dropped, summed latency and the
// generator's verdict.
type fakeLoad struct {
	ok, failed uint64
	load       Load
}

func (f *fakeLoad) Attempts() (uint64, uint64) { return f.ok, f.failed }
func (f *fakeLoad) Load() Load                 { return f.load }

// serve resolves ok and failed attempts of latency each, started in the
// same tick, plus extra started attempts still in flight and dropped
// arrivals.
func (f *fakeLoad) serve(ok, failed uint64, latency time.Duration, inflight, dropped uint64) {
	f.ok += ok
	f.failed += failed
	f.load.Started += ok + failed + inflight
	f.load.Dropped += dropped
	f.load.Latency += time.Duration(ok+failed) * latency
}

// newLoadHarness is newHarness over fakeLoad counters (h.lc), early breach
// off unless asked for, logging every line (debug included) into h.log.
func newLoadHarness(t *testing.T, l Limits, opts ...Option) *harness {
	t.Helper()
	h := &harness{lc: &fakeLoad{}}
	opts = append([]Option{WithEarlyBreach(false), WithLogger(slog.New(slog.NewTextHandler(&h.log, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	return h.start(t, l, h.lc, opts...)
}

// limitsFrom returns the default limits of mode and ceiling, opening at start.
func limitsFrom(mode Mode, ceiling, start float64) Limits {
	l := NewLimits(mode, ceiling)
	l.Start = start
	return l
}

func loadRateLimits(start float64) Limits { return limitsFrom(Rate, 10000, start) }

// Rate mode: a target that serves 400/s of an offer of 500/s answers every
// request it serves. The 100/s it does not serve either waits (in flight
// grows) or is never started (dropped): both count, and the window's
// fraction is the shed model's (x − c)/x = 20 %, a breach.
func TestUnservedLoadIsDamageInRateMode(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(500))
	h.lc.serve(2000, 0, 10*time.Millisecond, 301, 200) // 5 s: 2000 served, 301 more waiting (1 of them jitter), 200 dropped
	ask, ok := h.tick(5 * time.Second)
	w := h.last()
	if !ok || ask != 400 || w.Decision.Signal != SignalBackoff {
		t.Fatalf("ask %v %v signal %v, want the back-off 500 × 0.8 = 400", ask, ok, w.Decision.Signal)
	}
	if w.Frac != 0.2 || w.FailFrac != 0 || w.Unserved != 500 || w.Dropped != 200 || w.Queued != 301 || w.By != "unserved" || w.Read != EvidenceAll {
		t.Fatalf("window %+v, want frac 20 %% from 500 unserved (200 dropped, 300 queued)", w)
	}
	for _, want := range []string{"signal=back-off", "by=unserved", "unserved=500", "dropped=200", "queued=301", "failed=0%", "frac=20%"} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("movement line %q lacks %q", h.log.String(), want)
		}
	}
	// In flight that falls (a backlog draining after the back-off; the
	// drain is off so the window sees it) is not negative damage.
	h = newLoadHarness(t, loadRateLimits(500), WithEvidence(EvidenceAll&^EvidenceDrain))
	h.lc.serve(2000, 0, 10*time.Millisecond, 300, 200)
	ask, _ = h.tick(5 * time.Second)
	h.confirm(ask)
	h.lc.serve(2300, 0, 10*time.Millisecond, 0, 0)
	h.lc.load.Started -= 300 // the 300 waiting resolve inside the 2300
	if _, _ = h.tick(5 * time.Second); h.last().Unserved != 0 || h.last().Queued != -300 || h.last().Frac != 0 {
		t.Fatalf("draining window %+v, want queued −300 and nothing unserved", h.last())
	}
}

func TestUnservedSwitchedOffIsTheSeedsRule(t *testing.T) {
	for _, e := range []Evidence{EvidenceNone, EvidenceAll &^ EvidenceUnserved} {
		h := newLoadHarness(t, loadRateLimits(500), WithEvidence(e))
		h.lc.serve(2000, 0, 10*time.Millisecond, 300, 200)
		ask, ok := h.tick(5 * time.Second)
		if !ok || ask != 1000 || h.last().Frac != 0 || h.last().Unserved != 0 {
			t.Fatalf("evidence %v: ask %v %v window %+v, want slow start on failed attempts alone", e, ask, ok, h.last())
		}
	}
	// Counters without Load: the seed's rule whatever the option.
	h := newHarness(t, loadRateLimits(500))
	h.c.add(2000, 0)
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 1000 || h.windows[0].Read != EvidenceNone {
		t.Fatalf("plain counters: ask %v %v window %+v, want 1000 on failed attempts alone, read none", ask, ok, h.windows[0])
	}
}

// Early breach reads the same evidence: a target that stops answering shows
// it at the first tick as in-flight growth.
func TestEarlyBreachOnUnservedLoad(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(500), WithEarlyBreach(true))
	h.lc.serve(100, 0, 10*time.Millisecond, 401, 0) // 1 s: 100 served, 401 waiting
	ask, ok := h.tick(time.Second)
	if w := h.last(); !ok || ask != 125 || !w.Early || w.Frac != 0.8 {
		t.Fatalf("ask %v %v window %+v, want an early back-off to 500 × 0.25", ask, ok, w)
	}
}

// When the host says it is saturated at any tick of a window, the window's
// unserved load is the host's shortfall: the window holds, named.
func TestGeneratorSaturatedHolds(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(500))
	h.lc.serve(400, 0, 10*time.Millisecond, 0, 100)
	h.lc.load.GeneratorSaturated = true
	h.tick(time.Second)
	h.lc.load.GeneratorSaturated = false // one tick is enough
	h.lc.serve(1600, 0, 10*time.Millisecond, 0, 400)
	ask, ok := h.tick(4 * time.Second)
	w := h.last()
	if ok || w.Decision.Signal != SignalGeneratorSaturated || w.Decision.Kind != KindHold || w.Unserved != 0 || !w.GeneratorSaturated || w.By != "generator" {
		t.Fatalf("ask %v %v window %+v, want a generator-saturated hold", ask, ok, w)
	}
	if !strings.Contains(h.log.String(), "signal=generator-saturated") || !strings.Contains(h.log.String(), "generator_saturated=true") {
		t.Fatalf("movement line %q", h.log.String())
	}
	// Failed attempts alone still breach.
	h.lc.serve(1000, 1000, 10*time.Millisecond, 0, 0)
	h.lc.load.GeneratorSaturated = true
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 250 {
		t.Fatalf("failures above high while saturated: ask %v %v, want a back-off", ask, ok)
	}
	// Switched off: the unserved load counts.
	h = newLoadHarness(t, loadRateLimits(500), WithEvidence(EvidenceAll&^EvidenceGenerator))
	h.lc.serve(2000, 0, 10*time.Millisecond, 0, 500)
	h.lc.load.GeneratorSaturated = true
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 400 {
		t.Fatalf("generator evidence off: ask %v %v, want the unserved back-off to 400", ask, ok)
	}
}

func loadConcLimits(start float64) Limits { return limitsFrom(Concurrency, 500, start) }

// Concurrency mode: a target with 2 workers and a 10 ms handler. At 2 in
// flight latency is the baseline; at 4 every request waits behind another,
// latency doubles while goodput stays at 200/s (Little: X = N/R), and the
// latency knee backs off to 4 × (1 − (1 − 1/2)) = 2, the knee.
func TestLatencyKneeInConcurrencyMode(t *testing.T) {
	h := newLoadHarness(t, loadConcLimits(2))
	h.lc.serve(1000, 0, 10*time.Millisecond, 0, 0)
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask != 4 || h.last().Baseline != 10*time.Millisecond || h.last().Inflation != 1 {
		t.Fatalf("low load: ask %v %v window %+v, want slow start and a 10 ms baseline", ask, ok, h.last())
	}
	h.confirm(4)
	h.lc.serve(1000, 0, 20*time.Millisecond, 0, 0)
	ask, ok = h.tick(5 * time.Second)
	w := h.last()
	if !ok || ask != 2 || w.Inflation != 2 || w.Frac != 0.5 || w.FailFrac != 0 || w.By != "latency" || w.Decision.Signal != SignalBackoff {
		t.Fatalf("at the knee ×2: ask %v %v window %+v, want a latency back-off to 2", ask, ok, w)
	}
	if !strings.Contains(h.log.String(), "by=latency") || !strings.Contains(h.log.String(), "inflation=2.00") {
		t.Fatalf("movement line %q", h.log.String())
	}
	// Mild inflation (1.4×) holds, the hold naming latency as its reason and
	// the window keeping its own (clean) fraction; noise (1.2×) is clean.
	h.confirm(2)
	h.lc.serve(1000, 0, 14*time.Millisecond, 0, 0)
	if ask, ok := h.tick(5 * time.Second); ok || h.last().Decision.Signal != SignalLatency || h.last().Decision.Kind != KindHold ||
		h.last().By != "latency" || h.last().Frac != 0 || !Settled(h.last(), 0.05) {
		t.Fatalf("1.4×: ask %v %v window %+v, want a latency hold on a clean fraction", ask, ok, h.last())
	}
	if !strings.Contains(h.log.String(), "signal=latency") {
		t.Fatalf("movement line %q does not name the latency hold", h.log.String())
	}
	h.lc.serve(1000, 0, 12*time.Millisecond, 0, 0)
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 3 || h.last().By != "" {
		t.Fatalf("1.2×: ask %v %v window %+v, want a clean climb", ask, ok, h.last())
	}
	// Switched off: the seed doubles on.
	h = newLoadHarness(t, loadConcLimits(2), WithEvidence(EvidenceAll&^EvidenceLatency))
	h.lc.serve(1000, 0, 10*time.Millisecond, 0, 0)
	ask, _ = h.tick(5 * time.Second)
	h.confirm(ask)
	h.lc.serve(1000, 0, 20*time.Millisecond, 0, 0)
	if ask, ok := h.tick(5 * time.Second); !ok || ask != 8 {
		t.Fatalf("latency evidence off: ask %v %v, want 8", ask, ok)
	}
}

// Drain: after a back-off, the next window starts only once the attempts
// started before it have resolved, at most one window after the settle span.
func TestDrainBeforeJudging(t *testing.T) {
	l := loadRateLimits(500)
	h := newLoadHarness(t, l, WithSettle(time.Second))
	h.lc.serve(0, 0, 0, 600, 0) // 600 in flight from before the window: not its growth
	h.tick(time.Second)         // the opening settle span ends
	h.lc.serve(1000, 1000, 10*time.Millisecond, 0, 0)
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask != 250 {
		t.Fatalf("ask %v %v, want a back-off to 250", ask, ok)
	}
	h.confirm(250) // 600 attempts of the old offer still in flight
	h.lc.serve(0, 300, 10*time.Millisecond, 0, 0)
	h.lc.load.Started -= 300 // 300 of the 600 time out
	h.tick(time.Second)      // settle span ends; 300 still in flight
	h.lc.serve(0, 200, 10*time.Millisecond, 0, 0)
	h.lc.load.Started -= 200
	h.tick(time.Second) // 100 still in flight: still draining
	h.lc.serve(0, 100, 10*time.Millisecond, 0, 0)
	h.lc.load.Started -= 100
	h.tick(time.Second) // drained: the window starts here
	h.lc.serve(1250, 0, 10*time.Millisecond, 0, 0)
	ask, ok = h.tick(5 * time.Second)
	w := h.last()
	if !ok || ask != 375 || w.Failed != 0 || w.Drained != 2*time.Second || !w.Start.Equal(h.now.Add(-5*time.Second)) {
		t.Fatalf("after the drain: ask %v %v window %+v, want a clean safe climb judged only on the new offer, drained 2 s", ask, ok, w)
	}
	if !strings.Contains(h.log.String(), "drained=2s") {
		t.Fatalf("movement line %q lacks drained=2s", h.log.String())
	}
	// Bounded: a backlog that never resolves waits one window, then the
	// window starts anyway.
	h.confirm(ask)
	h.lc.serve(0, 0, 0, 1000, 0) // stuck from before the window
	h.tick(time.Second)
	h.lc.serve(1000, 1000, 10*time.Millisecond, 0, 0)
	ask, _ = h.tick(5 * time.Second)
	h.confirm(ask) // a back-off with 1000 stuck in flight
	for i := 0; i < 5; i++ {
		h.tick(time.Second)
	}
	h.tick(time.Second) // 1 s settle + 5 s bound: the window starts at the bound
	h.lc.serve(2000, 0, 10*time.Millisecond, 0, 0)
	h.tick(5 * time.Second)
	if w := h.last(); w.Drained != 5*time.Second {
		t.Fatalf("bounded drain: window %+v, want drained 5 s (one window)", w)
	}
	// Switched off: the window starts after the settle span.
	h = newLoadHarness(t, l, WithSettle(time.Second), WithEvidence(EvidenceAll&^EvidenceDrain))
	h.lc.serve(0, 0, 0, 600, 0)
	h.tick(time.Second)
	h.lc.serve(1000, 1000, 10*time.Millisecond, 0, 0)
	ask, _ = h.tick(5 * time.Second)
	h.confirm(ask)
	h.tick(time.Second)
	h.lc.serve(1250, 0, 10*time.Millisecond, 0, 0)
	h.tick(5 * time.Second)
	if w := h.last(); w.Drained != 0 || w.End.Sub(w.Start) != 5*time.Second {
		t.Fatalf("drain off: window %+v", w)
	}
}

func TestParseEvidence(t *testing.T) {
	for in, want := range map[string]Evidence{
		"all": EvidenceAll, "none": EvidenceNone, "unserved,drain": EvidenceUnserved | EvidenceDrain,
		" latency , generator": EvidenceLatency | EvidenceGenerator,
	} {
		if got, ok := ParseEvidence(in); !ok || got != want {
			t.Errorf("ParseEvidence(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := ParseEvidence("unserved,bogus"); ok {
		t.Error("a bogus kind parsed")
	}
	if EvidenceAll.String() != "unserved,latency,drain,generator" || EvidenceNone.String() != "none" {
		t.Errorf("names %q %q", EvidenceAll, EvidenceNone)
	}
}
