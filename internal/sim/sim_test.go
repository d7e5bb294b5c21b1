package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// serve calls t once for a step of one second at offer x, at time at.
func serve(t Target, at time.Duration, x float64) (ok, failed float64) {
	return t.Serve(at, x, time.Second, rand.New(rand.NewPCG(1, 2)))
}

func TestModelsServeTheirFormulas(t *testing.T) {
	for _, tc := range []struct {
		name           string
		target         Target
		x              float64
		wantOK, wantKO float64
	}{
		{"robust", Robust(), 5000, 5000, 0},
		{"shed below c", Shed(100), 80, 80, 0},
		{"shed at c", Shed(100), 100, 100, 0},
		{"shed above c: (x − c)/x fail", Shed(100), 150, 100, 50},
		{"collapse above c: c·(1 − (x − c)/(2c)) succeed", Collapse(100), 150, 75, 75},
		{"collapse at 3c: nothing succeeds", Collapse(100), 300, 0, 300},
		{"collapse beyond 3c: floor at 0", Collapse(100), 400, 0, 400},
		{"noisy: background on what succeeds", Noisy(Shed(100), 0.01), 100, 99, 1},
	} {
		ok, ko := serve(tc.target, 0, tc.x)
		if math.Abs(ok-tc.wantOK) > 1e-9 || math.Abs(ko-tc.wantKO) > 1e-9 {
			t.Errorf("%s: served (%v ok, %v failed), want (%v, %v)", tc.name, ok, ko, tc.wantOK, tc.wantKO)
		}
	}
}

func TestQueueDelaysFailuresUntilWaitsReachTheTimeout(t *testing.T) {
	q := Queue(100, 2*time.Second) // holds 200 attempts before its tail times out
	var failedAt time.Duration
	for s := time.Duration(0); s < 10*time.Second; s += time.Second {
		ok, ko := serve(q, s, 150) // the queue grows by 50 per second
		if ok != 100 {
			t.Fatalf("at %v: served %v, want the capacity 100", s, ok)
		}
		if ko > 0 && failedAt == 0 {
			failedAt = s
		}
		if s >= 4*time.Second && ko != 50 {
			t.Fatalf("at %v: %v timed out, want the excess 50 once the queue is full", s, ko)
		}
	}
	if failedAt != 4*time.Second {
		t.Fatalf("first timeouts at %v, want 4 s (200 queued at 50 per second)", failedAt)
	}
	// Below capacity the full queue drains, 50 per second, before the
	// offered attempts alone are served.
	if ok, ko := serve(q, 10*time.Second, 50); ok != 100 || ko != 0 {
		t.Fatalf("draining: (%v ok, %v failed), want (100, 0)", ok, ko)
	}
}

func TestSwitchAndDeadSplitAStepAtTheirInstants(t *testing.T) {
	sw := Switch(Shed(100), Shed(200), 1500*time.Millisecond)
	if ok, ko := serve(sw, time.Second, 200); ok != 150 || ko != 50 {
		t.Fatalf("straddling step: (%v ok, %v failed), want (150, 50): half a second at each capacity", ok, ko)
	}
	dead := Dead(Shed(100), 10*time.Second, 20*time.Second)
	for _, tc := range []struct {
		at     time.Duration
		wantOK float64
	}{{9 * time.Second, 50}, {10 * time.Second, 0}, {19 * time.Second, 0}, {20 * time.Second, 50}} {
		if ok, ko := serve(dead, tc.at, 50); ok != tc.wantOK || ok+ko != 50 {
			t.Errorf("dead target at %v: (%v ok, %v failed), want %v ok of 50", tc.at, ok, ko, tc.wantOK)
		}
	}
}

func TestExactCountsCarryTheRemainder(t *testing.T) {
	var s sampler
	var ok, ko uint64
	for range 1000 {
		a, b := s.counts(2.7, 0.3, false, nil)
		ok += a
		ko += b
	}
	if ok != 2700 || ko != 300 {
		t.Fatalf("1000 steps of (2.7, 0.3) gave (%d, %d), want (2700, 300)", ok, ko)
	}
}

// A long run of fractional steps on top of a total in the hundred
// millions still lands every attempt on its step: here 204.8 attempts a
// step (1024/s in 200 ms steps) after 10^8, where the exact total after k
// steps is 10^8 + 1024k/5. Plain float sums drift past the sampler's
// tolerance there (about 4 % of these steps came out one attempt off).
func TestExactCountsDoNotDriftOverALongRun(t *testing.T) {
	var s sampler
	s.counts(1e8, 0, false, nil)
	total := uint64(1e8)
	for k := 1; k <= 200_000; k++ {
		ok, _ := s.counts(204.8, 0, false, nil)
		total += ok
		if want := uint64(1e8) + uint64(1024*k/5); total != want {
			t.Fatalf("step %d: %d attempts so far, want %d", k, total, want)
		}
	}
}

func TestBinomialNoiseKeepsTheMeanAndVaries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		n uint64
		p float64
	}{{40, 0.3}, {1000, 0.01}, {1000, 0.995}, {5000, 0.2}} {
		const draws = 4000
		var sum, sq float64
		for range draws {
			k := float64(binomial(tc.n, tc.p, rng))
			if k < 0 || k > float64(tc.n) {
				t.Fatalf("Binomial(%d, %v) drew %v, outside [0, n]", tc.n, tc.p, k)
			}
			sum += k
			sq += k * k
		}
		mean := sum / draws
		sd := math.Sqrt(sq/draws - mean*mean)
		wantMean, wantSD := float64(tc.n)*tc.p, math.Sqrt(float64(tc.n)*tc.p*(1-tc.p))
		// The sample mean's standard error is wantSD/√draws; allow 5 of them,
		// and 15 % on the spread.
		if math.Abs(mean-wantMean) > 5*wantSD/math.Sqrt(draws) || math.Abs(sd-wantSD) > 0.15*wantSD {
			t.Errorf("Binomial(%d, %v): mean %.3f sd %.3f, want %.3f and %.3f", tc.n, tc.p, mean, sd, wantMean, wantSD)
		}
	}
}

func TestBaselinesFollowTheirRules(t *testing.T) {
	l := Setting()
	aimd, err := Run(NewAIMD(l), Shed(100), UntilWindows(150))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range aimd.Windows {
		d := w.Decision
		var want float64
		switch {
		case w.Frac > l.High:
			want = w.Offer * 0.9
		case w.Frac > l.Low:
			want = w.Offer
		default:
			want = w.Offer + 1
		}
		if math.Abs(d.Offer-want) > 1e-9 {
			t.Fatalf("AIMD window at %v (frac %v) moved to %v, want %v", w.Offer, w.Frac, d.Offer, want)
		}
	}
	ramp, err := Run(NewRamp(l, 500), Shed(1300), UntilWindows(30))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 501, 1001, 1501, 1001} // breach at 1501, one step back, hold
	offers := ramp.Offers()
	for i, x := range offers {
		if w := want[min(i, len(want)-1)]; x != w {
			t.Fatalf("ramp offers %v, want %v then a hold", offers, want)
		}
	}
	fixed, err := Run(NewFixed(l), Shed(100), For(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if fixed.OK+fixed.Failed != uint64(60*l.Ceiling) {
		t.Fatalf("fixed load resolved %d attempts in a minute, want %v", fixed.OK+fixed.Failed, 60*l.Ceiling)
	}
}

func TestAssessMeasuresARun(t *testing.T) {
	l := Setting()
	// 1, 2, …, 64 clean; 128 (the offer after 7 decisions, already above
	// 90 % of c) breaches, 22 % fail, and backs off to 100; probes clean at
	// 100, then holds in the dead band at 102.56. The seed's cadence judges
	// the breach after its full 5 s window (5 × 28 failures); the early
	// breach decides it at the first check (a fifth of a tick) whose
	// evidence holds 5 × MinAttempts attempts: 0.8 s, 102 attempts, 22
	// failures, and a fraction that whole attempts make 21.6 %, not 21.875 %,
	// so it backs off to 100.39 and holds at 102.95.
	for _, tc := range []struct {
		ctl    Controller
		failed uint64
		early  bool
		offer  float64
	}{{NewSeedGovernor(l), 5 * 28, false, 102.56}, {NewGovernor(l), 22, true, 128*(1-22.0/102) + 2.56}} {
		r, err := Run(tc.ctl, Shed(100), For(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		q := Assess(r, 100, l.High, 0, 0.5)
		if !q.Settled || q.SettleWindows != 8 || q.To90 != 7 {
			t.Fatalf("%s: settled=%v after %d windows, 90 %% after %d; want 8 and 7; offers %v", r.Controller, q.Settled, q.SettleWindows, q.To90, r.Offers())
		}
		if !q.Breached || q.Breach.Offer != 128 || q.FailedBefore != q.Breach.Failed || q.Breach.Failed != tc.failed || q.Breach.Early != tc.early {
			t.Fatalf("%s: breach %+v, failed before settling %d; want the slow-start window at 128 with %d failures and nothing else", r.Controller, q.Breach, q.FailedBefore, tc.failed)
		}
		if math.Abs(q.Goodput-100) > 1e-9 || q.Oscillation != 0 || math.Abs(q.Offer-tc.offer) > 1e-9 {
			t.Fatalf("%s: steady goodput %v, oscillation %v, offer %v; want 100, 0 and %v", r.Controller, q.Goodput, q.Oscillation, q.Offer, tc.offer)
		}
	}
}

func TestRunRejectsBadInputWithOneClearError(t *testing.T) {
	l := Setting()
	bad := l
	bad.High = 2
	badTarget := TargetFunc(func(time.Duration, float64, time.Duration, *rand.Rand) (float64, float64) { return -1, 0 })
	for _, tc := range []struct {
		name string
		ctl  Controller
		t    Target
		opts []Option
		want string
	}{
		{"no controller", nil, Shed(10), []Option{For(time.Minute)}, "controller is required"},
		{"no target", NewAIMD(l), nil, []Option{For(time.Minute)}, "target is required"},
		{"no stop", NewAIMD(l), Shed(10), nil, "stop condition"},
		{"bad tick", NewAIMD(l), Shed(10), []Option{For(time.Minute), WithTick(0)}, "tick must be > 0"},
		{"bad limits, governor", NewGovernor(bad), Shed(10), []Option{For(time.Minute)}, "high"},
		{"bad limits, baseline", NewRamp(bad, 5), Shed(10), []Option{For(time.Minute)}, "high"},
		{"bad counts", NewFixed(l), badTarget, []Option{For(time.Minute)}, "bad counts"},
	} {
		_, err := Run(tc.ctl, tc.t, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

func TestRunsAreDeterministic(t *testing.T) {
	l := Setting()
	run := func() Result {
		r, err := Run(NewGovernor(l), Noisy(Collapse(700), 0.005), For(20*time.Minute), WithNoise(42))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(), run()
	if len(a.Windows) != len(b.Windows) || a.OK != b.OK || a.Failed != b.Failed {
		t.Fatalf("two runs with seed 42 differ: %d/%d/%d windows/ok/failed vs %d/%d/%d",
			len(a.Windows), a.OK, a.Failed, len(b.Windows), b.OK, b.Failed)
	}
	for i := range a.Windows {
		if a.Windows[i] != b.Windows[i] {
			t.Fatalf("window %d differs: %+v vs %+v", i, a.Windows[i], b.Windows[i])
		}
	}
	if a.Failed == 0 {
		t.Fatal("a noisy collapse run inflicted no failures: the noise is not reaching the counters")
	}
}

// TestCapacityTakesTheLevelThePhaseSettledAt checks governor.Capacity on
// hand-made windows: only settled windows within ±15 % of the last settled
// window's offer count, so a hold at a low offer on the way up, or at a
// capacity the target has left, does not dilute the estimate.
func TestCapacityTakesTheLevelThePhaseSettledAt(t *testing.T) {
	var at time.Duration
	win := func(offer float64, failed uint64, signal governor.Signal) governor.Window {
		start := Epoch.Add(at)
		at += 5 * time.Second
		ok := uint64(5*offer) - failed
		return governor.Window{Start: start, End: Epoch.Add(at), Offer: offer, OK: ok, Failed: failed,
			Frac: float64(failed) / float64(ok+failed), Decision: governor.Decision{Signal: signal}}
	}
	phase := []governor.Window{
		win(4, 1, governor.SignalDeadBand), // one unlucky failure at a low offer
		win(4, 0, governor.SignalSlowStart),
		win(8, 0, governor.SignalSlowStart),
		win(16, 0, governor.SignalSlowStart),
		win(32, 40, governor.SignalBackoff), // breach: never counts
		win(24, 0, governor.SignalProbe),    // the steady state starts here: 120 ok
		win(26, 2, governor.SignalDeadBand), // 128 ok
		win(26, 2, governor.SignalDeadBand),
	}
	e := governor.Capacity(phase, 0.05)
	if e.Windows != 3 || math.Abs(e.Goodput-(120+128+128)/15.0) > 1e-9 || e.Saturated != 1 {
		t.Fatalf("estimate %+v, want the last 3 windows (goodput %v/s) and 1 saturated", e, (120+128+128)/15.0)
	}
	// The target halves: a breach, and a new steady state at about 12.
	halved := append(phase, win(26, 70, governor.SignalBackoff), win(12, 0, governor.SignalProbe), win(13, 0, governor.SignalDeadBand))
	if e := governor.Capacity(halved, 0.05); e.Windows != 2 || e.Goodput != 12.5 || e.Saturated != 2 {
		t.Fatalf("estimate %+v, want the 2 windows after the halving (12.5/s) and 2 saturated", e)
	}
}

// TestNoEvidenceHoldsKeepTheirEvidence runs the governor (without its quick
// climb, which would double on the first clean attempt) and AIMD at 0.2
// attempts per second, too slow to gather MinAttempts (20) in 4 × Window:
// both record a no-evidence hold every 20 s, keep collecting, and judge the
// window at 100 s on all 20 attempts, so the baselines' windows are the
// governor's full windows.
func TestNoEvidenceHoldsKeepTheirEvidence(t *testing.T) {
	l := Setting()
	l.Floor, l.Start = 0.2, 0.2
	for _, tc := range []struct {
		ctl  Controller
		next float64
	}{{NewGovernor(l, WithGovernorOptions(governor.WithQuickClimb(false))), 0.4}, {NewAIMD(l), 1.2}} {
		r, err := Run(tc.ctl, Robust(), For(100*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Windows) != 5 {
			t.Fatalf("%s: %d windows, want 4 no-evidence holds and one judged window: %+v", r.Controller, len(r.Windows), r.Windows)
		}
		for i, w := range r.Windows {
			if w.Start != Epoch || w.End != Epoch.Add(time.Duration(i+1)*20*time.Second) {
				t.Fatalf("%s: window %d spans %v…%v, want the same start and 20 s more each", r.Controller, i, w.Start.Sub(Epoch), w.End.Sub(Epoch))
			}
			if i < 4 && (w.Decision.Signal != governor.SignalNoEvidence || w.OK != uint64(4*(i+1))) {
				t.Fatalf("%s: window %d: signal %v with %d ok, want a no-evidence hold with %d", r.Controller, i, w.Decision.Signal, w.OK, 4*(i+1))
			}
		}
		if last := r.Windows[4]; last.OK != 20 || math.Abs(r.Final-tc.next) > 1e-9 {
			t.Fatalf("%s: judged window had %d ok and moved to %v, want 20 and %v", r.Controller, last.OK, r.Final, tc.next)
		}
	}
}
