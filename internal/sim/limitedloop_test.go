package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// limitedLoop is issue 28's real target as a model: nginx's limit_req at
// rate r with burst=b nodelay, VUs that sleep think between requests
// answered in about 0.25 ms, the VUs the governor adds staggered as
// internal/phase does (over the loop's cycle, at most half the governor's
// Shortest window).
func limitedLoop(think time.Duration, rate, burst float64, l governor.Limits) LimitedLoopSpec {
	g, err := governor.New(l, governor.CountersFunc(func() (uint64, uint64) { return 0, 0 }))
	if err != nil {
		panic(err)
	}
	return LimitedLoopSpec{Think: think, Response: 250 * time.Microsecond, Jitter: 100 * time.Microsecond, Rate: rate, Burst: burst, Stagger: g.Shortest() / 2}
}

// limitedSetting is the closed-loop setting with issue 28's ceiling (400
// VUs) and the real governor's settle span (a tick): the limiter's state
// outlives a change of offer, so the simulation settles as a run does.
func limitedSetting() (governor.Limits, GovernorOption) {
	l := closedLoopSetting()
	l.Ceiling = 400
	return l, WithGovernorOptions(governor.WithSettle(time.Second))
}

// TestLimitedLoopBurstBar: issue 28's bar on a limiter whose burst
// allowance hides a smooth excess (burst = a second of its rate: 128 VUs
// thinking a second send 28 req/s over a 100 r/s limit for 3.6 s without a
// refusal, longer than the quick climb's two seconds, so slow start doubles
// once more, to 256). Over 20 seeds, for 0.1 s and 1 s of think time and
// limits of 100 and 200 r/s: the capacity within ±10 %, 90 % of it within
// 60 s, at most 8 % of the attempts before settling failed. With 5 s of
// think time 400 VUs send 80 req/s, under the limit: the offer climbs to
// the ceiling without a failure.
func TestLimitedLoopBurstBar(t *testing.T) {
	t.Parallel()
	l, settle := limitedSetting()
	for _, z := range []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second} {
		for _, rate := range []float64{100, 200} {
			spec := limitedLoop(z, rate, rate, l)
			capVUs := spec.Capacity()
			var worstFailed, meanFailed float64
			var worst90 time.Duration
			for seed := uint64(1); seed <= 20; seed++ {
				r, err := Run(NewGovernor(l, settle), LimitedLoop(spec), For(100*time.Second), WithNoise(seed))
				if err != nil {
					t.Fatal(err)
				}
				if capVUs > l.Ceiling {
					if n, ok := ReachedAt(r.Offers(), l.Ceiling); !ok || r.Failed != 0 {
						t.Fatalf("think %v, %v r/s seed %d: ceiling reached %v (window %d) with %d failed, want it without a failure; offers %v", z, rate, seed, ok, n, r.Failed, r.Offers())
					}
					continue
				}
				e := governor.Capacity(r.Windows, l.High)
				n90, ok := ReachedAt(r.Offers(), 0.9*capVUs)
				f, settled := failedBeforeSettling(r, capVUs, l.High)
				if e.Windows == 0 || math.Abs(e.Goodput/rate-1) > 0.10 || !ok || r.decidedAt(n90) > 60*time.Second || !settled || f > 0.08 {
					t.Fatalf("think %v, %v r/s seed %d: capacity %.4g req/s, 90 %% at %v (%v), settled %v with %.2f %% failed before; offers %v",
						z, rate, seed, e.Goodput, r.decidedAt(n90), ok, settled, 100*f, r.Offers())
				}
				worstFailed, meanFailed = max(worstFailed, f), meanFailed+f/20
				worst90 = max(worst90, r.decidedAt(n90))
			}
			if capVUs <= l.Ceiling {
				t.Logf("think %v, %v r/s burst %v (capacity %.4g VUs), 20 seeds: 90 %% within %v, failed before settling mean %.2f %% worst %.2f %%", z, rate, rate, capVUs, worst90, 100*meanFailed, 100*worstFailed)
			}
		}
	}
}

// The model: below the limit every request passes; a smooth excess passes
// until the burst allowance is spent, then only the rate does; VUs added
// at once (a cohort) overflow the allowance at once.
func TestLimitedLoopModel(t *testing.T) {
	spec := LimitedLoopSpec{Think: time.Second - time.Millisecond, Response: time.Millisecond, Rate: 100, Burst: 100, Stagger: time.Second}
	m := LimitedLoop(spec)
	step := 200 * time.Millisecond
	var at time.Duration
	serve := func(n float64, d time.Duration) (ok, failed float64) {
		for end := at + d; at < end; at += step {
			o, f := m.Serve(at, n, step, nil)
			ok, failed = ok+o, failed+f
		}
		return ok, failed
	}
	if ok, failed := serve(50, 2*time.Second); failed != 0 || math.Abs(ok-100) > 1 {
		t.Fatalf("50 VUs for 2 s: %v ok %v failed, want 100 and 0", ok, failed)
	}
	// 128 VUs (the 78 new ones staggered over the 1 s cycle) send 128 a
	// second: the 28 a second over the limit pass for a while, then the
	// allowance is spent and about 28 a second are refused.
	if _, failed := serve(128, 2*time.Second); failed != 0 {
		t.Fatalf("128 VUs for 2 s: %v failed, want the burst allowance to take the excess", failed)
	}
	serve(128, 3*time.Second)
	if ok, failed := serve(128, 4*time.Second); math.Abs(failed-4*28) > 10 || math.Abs(ok+failed-4*128) > 2 {
		t.Fatalf("128 VUs for 4 s more: %v ok %v failed, want the allowance spent and about 28 a second refused", ok, failed)
	}
	// Without the stagger, VUs added after the first cycle start at one
	// instant: a cohort of 150 overflows the allowance at once.
	spec.Stagger = 0
	c := LimitedLoop(spec)
	c.Serve(0, 50, 2*time.Second, nil)
	if _, failed := c.Serve(2*time.Second, 200, step, nil); failed < 40 {
		t.Fatalf("a cohort of 150 VUs: %v failed in its first read, want the excess over the allowance refused", failed)
	}
}

func TestLimitedLoopSpecValidate(t *testing.T) {
	ok := LimitedLoopSpec{Think: time.Second, Response: time.Millisecond, Rate: 100, Burst: 100, Stagger: time.Second}
	if err := ok.Validate(); err != nil || math.Abs(ok.Capacity()-100.1) > 1e-9 {
		t.Fatalf("valid spec: %v, capacity %v", err, ok.Capacity())
	}
	for _, tc := range []struct {
		edit func(*LimitedLoopSpec)
		want string
	}{
		{func(s *LimitedLoopSpec) { s.Think = 0 }, "limited loop think time"},
		{func(s *LimitedLoopSpec) { s.Rate = math.Inf(1) }, "rate"},
		{func(s *LimitedLoopSpec) { s.Burst = -1 }, "burst"},
		{func(s *LimitedLoopSpec) { s.Stagger = -time.Second }, "stagger"},
	} {
		s := ok
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want it to name %q", s, err, tc.want)
		}
	}
}
