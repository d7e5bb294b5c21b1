package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// closedLoopSetting is the §5 setting in concurrency mode: the offer is
// VUs, start = floor = 1, ceiling 10 000, high 5 %, low 1 %, window 5 s,
// MinAttempts 20.
func closedLoopSetting() governor.Limits {
	l := Setting()
	l.Mode = governor.Concurrency
	return l
}

// The think times the closed-loop bar is stated for, and the server rates
// (requests a second) it is checked at: 100/s with a second of think time
// is issue 28's nginx (limit_req 100 r/s, sleep(1)). Slower servers are
// TestClosedLoopSlowServers'. A loop whose capacity
// is under minLoopVUs is left out: there one VU more is beyond the dead
// band (one VU over 5 VUs fails a sixth of the requests, over 10 VUs an
// eleventh, more than twice High), so the seed's probes alternate around it
// whatever the evidence; TestClosedLoopFragileTargetIsNotAssaulted covers
// those.
var (
	thinkTimes  = []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second}
	serverRates = []float64{100, 200, 500, 2000}
)

const minLoopVUs = 20

// eachLoop calls f for every think time and rate of the bar whose capacity
// is at least minLoopVUs, with a server answering in response ± jitter.
func eachLoop(response, jitter time.Duration, queues bool, f func(spec ClosedLoopSpec)) {
	for _, z := range thinkTimes {
		for _, c := range serverRates {
			spec := ClosedLoopSpec{Think: z, Response: response, Jitter: jitter, Rate: c, Queues: queues}
			if spec.Capacity() >= minLoopVUs {
				f(spec)
			}
		}
	}
}

// closedLoopRun is how long a closed-loop run lasts: 90 % of capacity must
// come within 60 s, and the steady state needs a few windows after that.
const closedLoopRun = 180 * time.Second

// failedBeforeSettling returns the share of the attempts that failed before
// the offer first reached the steady state around capVUs VUs: CompareBand
// widened by a VU either side (offers are whole VUs, and the seed's
// smallest trim of a 20-VU offer is two of them). From there on the offer
// probes and holds within the failure bound, and at a few requests a second
// a probe one VU above the band now and then is sampling noise, not a
// search. It returns false when the offer never reached the band.
func failedBeforeSettling(r Result, capVUs, high float64) (float64, bool) {
	band := CompareBand(capVUs, high)
	band.Lo, band.Hi = band.Lo-1, band.Hi+1
	offers := r.Offers()
	for n, x := range offers {
		if band.Contains(x) {
			failed, attempts := count(r.Windows[:n])
			return float64(failed) / float64(max(1, attempts)), true
		}
	}
	return 0, false
}

// loopQuality is what checkClosedLoop measured of one run.
type loopQuality struct {
	To90          time.Duration // when the offer first reached 90 % of the capacity in VUs
	FailedBefore  float64       // the share of the attempts before settling that failed
	SteadyVUs     float64       // the mean offer over the settled windows
	GoodputPerCap float64       // the reported capacity (goodput) over Rate
}

// checkClosedLoop runs the governor against spec with sampling noise and
// asserts docs/design.md §5's closed-loop bar: the reported capacity (goodput over
// the settled windows) within ±10 % of Rate, 90 % of the capacity in VUs
// reached within 60 s of the floor, and at most 8 % of the attempts failed
// before the offer settled (see failedBeforeSettling).
func checkClosedLoop(t *testing.T, spec ClosedLoopSpec, seed uint64) loopQuality {
	t.Helper()
	l := closedLoopSetting()
	r, err := Run(NewGovernor(l), ClosedLoop(spec), For(closedLoopRun), WithNoise(seed))
	if err != nil {
		t.Fatal(err)
	}
	capVUs := spec.Capacity()
	e := governor.Capacity(r.Windows, l.High)
	name := spec.name()
	q := loopQuality{SteadyVUs: e.Offer, GoodputPerCap: e.Goodput / spec.Rate}
	if e.Windows == 0 || math.Abs(q.GoodputPerCap-1) > 0.10 {
		t.Fatalf("%s: capacity %.4g req/s over %d settled windows, want %v ± 10 %%; offers %v", name, e.Goodput, e.Windows, spec.Rate, r.Offers())
	}
	n90, ok := ReachedAt(r.Offers(), 0.9*capVUs)
	if q.To90 = r.decidedAt(n90); !ok || q.To90 > 60*time.Second {
		t.Fatalf("%s: 90 %% of %.4g VUs reached=%v at %v, want within 60 s; offers %v", name, capVUs, ok, q.To90, r.Offers())
	}
	if !spec.Queues {
		var ok bool
		if q.FailedBefore, ok = failedBeforeSettling(r, capVUs, l.High); !ok {
			t.Fatalf("%s: never settled around %.4g VUs; offers %v", name, capVUs, r.Offers())
		}
		if q.FailedBefore > 0.08 {
			t.Fatalf("%s: %.2f %% of the attempts before settling failed, want at most 8 %%; offers %v", name, 100*q.FailedBefore, r.Offers())
		}
	}
	for _, w := range r.Windows {
		if w.By == "latency" && !spec.Queues {
			t.Fatalf("%s: latency decided window %+v: the response time only jittered", name, w)
		}
	}
	return q
}

func (s ClosedLoopSpec) name() string {
	kind := "shed"
	if s.Queues {
		kind = "queue"
	}
	return fmt.Sprintf("%s %.4g/s, think %v", kind, s.Rate, s.Think)
}

// TestClosedLoopWithThinkTimeBar: a shedding server (nginx limit_req: the
// excess refused at once with a 503) behind VUs that think 0.1 s, 1 s or
// 5 s between requests answered in about 0.25 ms (± 0.1 ms of noise, as on a
// busy host: p50 0.18 → 0.28 ms is the issue's). Every capacity must meet
// the bar, and the latency noise must never decide a window.
func TestClosedLoopWithThinkTimeBar(t *testing.T) {
	t.Parallel()
	eachLoop(250*time.Microsecond, 100*time.Microsecond, false, func(spec ClosedLoopSpec) {
		var worst time.Duration
		var worstFailed float64
		for seed := uint64(1); seed <= 10; seed++ {
			q := checkClosedLoop(t, spec, seed)
			worst = max(worst, q.To90)
			worstFailed = max(worstFailed, q.FailedBefore)
		}
		t.Logf("%s (capacity %.4g VUs), 10 seeds: 90 %% within %v, at most %.2f %% failed before settling", spec.name(), spec.Capacity(), worst, 100*worstFailed)
	})
}

// TestClosedLoopSlowServers states what the quick climb costs at 20 and 50
// requests a second: capacity and time to 90 % as the bar, but up to 15 %
// of the attempts before settling failed, not 8 % (worst of 10 seeds:
// 14.0 % at 20/s with a second of think time, 9.5 % at 50/s, 8.1 % at 20/s
// with 5 s). The climb from the floor spends two ticks at each level, so it
// sends few clean requests before the doubling that overshoots (about 94 up
// to 32 VUs at 20/s), and at a few requests a read the early breach needs
// several reads to see the overshoot with confidence. The seed's cadence (5 s
// and 20 attempts a window) sent ten times as many clean requests first and
// took minutes to get there.
func TestClosedLoopSlowServers(t *testing.T) {
	t.Parallel()
	l := closedLoopSetting()
	for _, z := range thinkTimes {
		for _, c := range []float64{20, 50} {
			spec := ClosedLoopSpec{Think: z, Response: 250 * time.Microsecond, Jitter: 100 * time.Microsecond, Rate: c}
			if spec.Capacity() < minLoopVUs {
				continue
			}
			worst := 0.0
			for seed := uint64(1); seed <= 10; seed++ {
				r, err := Run(NewGovernor(l), ClosedLoop(spec), For(closedLoopRun), WithNoise(seed))
				if err != nil {
					t.Fatal(err)
				}
				e := governor.Capacity(r.Windows, l.High)
				capVUs := spec.Capacity()
				n90, ok := ReachedAt(r.Offers(), 0.9*capVUs)
				f, settled := failedBeforeSettling(r, capVUs, l.High)
				if math.Abs(e.Goodput/c-1) > 0.10 || !ok || r.decidedAt(n90) > 60*time.Second || !settled || f > 0.15 {
					t.Fatalf("%s seed %d: capacity %.4g, 90 %% at %v (%v), settled %v with %.2f %% failed before; offers %v",
						spec.name(), seed, e.Goodput, r.decidedAt(n90), ok, settled, 100*f, r.Offers())
				}
				worst = max(worst, f)
			}
			t.Logf("%s (capacity %.4g VUs), 10 seeds: at most %.2f %% failed before settling", spec.name(), spec.Capacity(), 100*worst)
		}
	}
}

// TestClosedLoopQueueingServerBar: the same loop against a server that
// queues the excess (nothing fails; the response time grows to
// N/Rate − Think): the latency evidence, read through Little's law, finds
// the plateau within ±10 % and 90 % of it within 60 s.
func TestClosedLoopQueueingServerBar(t *testing.T) {
	t.Parallel()
	eachLoop(10*time.Millisecond, time.Millisecond, true, func(spec ClosedLoopSpec) {
		q := checkClosedLoop(t, spec, 1)
		t.Logf("%s (capacity %.4g VUs): 90 %% at %v, capacity %.4g × the rate at %.4g VUs", spec.name(), spec.Capacity(), q.To90, q.GoodputPerCap, q.SteadyVUs)
	})
}

// A fragile closed loop (2 requests a second, a second of think time: two
// VUs) is never assaulted: the quick climb doubles on a handful of clean
// requests, but the offer never goes past twice the capacity, and it fails
// no larger share of the requests than the same governor without the quick
// climb (at two VUs the seed's probes alternate between 2 and 3 whatever
// the cadence: a third VU fails a third of the requests).
func TestClosedLoopFragileTargetIsNotAssaulted(t *testing.T) {
	t.Parallel()
	spec := ClosedLoopSpec{Think: time.Second, Response: 250 * time.Microsecond, Rate: 2}
	l := closedLoopSetting()
	share := func(r Result) float64 { return float64(r.Failed) / float64(r.OK+r.Failed) }
	var quick, slow float64
	for seed := uint64(1); seed <= 20; seed++ {
		r, err := Run(NewGovernor(l), ClosedLoop(spec), For(closedLoopRun), WithNoise(seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.Offers() {
			if x > 2*spec.Capacity()+1 {
				t.Fatalf("seed %d: offer %v VUs against a capacity of %.3g; offers %v", seed, x, spec.Capacity(), r.Offers())
			}
		}
		s, err := Run(NewGovernor(l, WithGovernorOptions(governor.WithQuickClimb(false))), ClosedLoop(spec), For(closedLoopRun), WithNoise(seed))
		if err != nil {
			t.Fatal(err)
		}
		quick += share(r) / 20
		slow += share(s) / 20
	}
	t.Logf("2 VUs: %.1f %% of requests failed with the quick climb, %.1f %% without (mean of 20 seeds)", 100*quick, 100*slow)
	if quick > slow+0.01 {
		t.Fatalf("the quick climb failed %.1f %% of the requests, without it %.1f %%", 100*quick, 100*slow)
	}
}

func TestClosedLoopSpecValidate(t *testing.T) {
	ok := ClosedLoopSpec{Think: time.Second, Response: time.Millisecond, Rate: 100}
	if err := ok.Validate(); err != nil || math.Abs(ok.Capacity()-100.1) > 1e-9 {
		t.Fatalf("valid spec: %v, capacity %v", err, ok.Capacity())
	}
	for _, tc := range []struct {
		edit func(*ClosedLoopSpec)
		want string
	}{
		{func(s *ClosedLoopSpec) { s.Think = 0 }, "think time"},
		{func(s *ClosedLoopSpec) { s.Response = 0 }, "response time"},
		{func(s *ClosedLoopSpec) { s.Jitter = time.Millisecond }, "jitter"},
		{func(s *ClosedLoopSpec) { s.Rate = math.NaN() }, "rate"},
	} {
		s := ok
		tc.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate() = %v, want it to name %q", s, err, tc.want)
		}
	}
}

// The model itself: below capacity every request succeeds at the unloaded
// response time, N/(R+Z) a second; above it a shedding server serves Rate
// and refuses the rest, a queueing one serves Rate and the response time
// becomes N/Rate − Z.
func TestClosedLoopModel(t *testing.T) {
	spec := ClosedLoopSpec{Think: time.Second, Response: 10 * time.Millisecond, Rate: 100}
	shed := ClosedLoop(spec)
	if ok, failed := shed.Serve(0, 50.5, time.Second, nil); !near(ok, 50, 1e-9) || failed != 0 {
		t.Fatalf("50.5 VUs: %v ok %v failed, want 50 and 0", ok, failed)
	}
	if ok, failed := shed.Serve(0, 202, time.Second, nil); !near(ok, 100, 1e-9) || !near(failed, 100, 1e-9) {
		t.Fatalf("202 VUs: %v ok %v failed, want 100 and 100", ok, failed)
	}
	spec.Queues = true
	q := ClosedLoop(spec)
	ok, failed := q.Serve(0, 202, time.Second, nil)
	if !near(ok, 100, 1e-9) || failed != 0 {
		t.Fatalf("queueing, 202 VUs: %v ok %v failed, want 100 and 0", ok, failed)
	}
	if l := q.Load(); !near(l.Latency.Seconds()/ok, 1.02, 1e-6) {
		t.Fatalf("queueing, 202 VUs: mean response %v, want 202/100 − 1 = 1.02 s", l.Latency.Seconds()/ok)
	}
}
