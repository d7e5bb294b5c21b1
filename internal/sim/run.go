package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Setting returns the limits docs/design.md §5 states its bars for: rate mode,
// start = floor = 1, ceiling 10 000, high 5 %, low 1 %, window 5 s and the
// default min attempts (20).
func Setting() governor.Limits {
	l := governor.NewLimits(governor.Rate, 10000)
	l.Low = 0.01
	return l
}

// Epoch is the simulated instant every run starts at.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Result is what one run produced.
type Result struct {
	// Controller is the controller's name.
	Controller string
	// Windows are the controller's closed windows, oldest first.
	Windows []governor.Window
	// Final is the offer in force when the run ended: the offer after the
	// last window's decision, as the controller committed it.
	Final float64
	// OK and Failed count every resolved attempt of the run.
	OK, Failed uint64
	// Elapsed is the simulated time the run lasted.
	Elapsed time.Duration
}

// Option configures a run.
type Option func(*run)

type run struct {
	tick    time.Duration
	tickSet bool
	limit   time.Duration
	windows int
	noise   bool
	seed    uint64
	agents  *agents // WithAgents
}

// For stops the run after d of simulated time.
func For(d time.Duration) Option { return func(r *run) { r.limit = d } }

// UntilWindows stops the run once the controller has closed n windows.
func UntilWindows(n int) Option { return func(r *run) { r.windows = n } }

// WithTick sets the simulation step: how often the controller reads the
// counters. By default it is the controller's own (a controller with a
// Step method, as Governor has, says how often it reads them), else 1 s.
func WithTick(d time.Duration) Option { return func(r *run) { r.tick, r.tickSet = d, true } }

// WithNoise turns the target's expected counts into whole attempts by
// binomial sampling of the failures, from a random source seeded with seed.
// Without it the counts are rounded deterministically, carrying the
// remainder from step to step so no attempt is lost. The seed also seeds
// the source handed to the target.
func WithNoise(seed uint64) Option { return func(r *run) { r.noise, r.seed = true, seed } }

// maxSteps bounds a run whose controller stops closing windows.
const maxSteps = 10_000_000

// Run runs ctl against target from Epoch until the first stop condition
// (For, UntilWindows) holds; at least one is required. Each step serves the
// attempts of one tick at the offer in force, adds them to the cumulative
// counters and then lets the controller tick.
func Run(ctl Controller, target Target, opts ...Option) (Result, error) {
	r := run{tick: time.Second}
	for _, o := range opts {
		o(&r)
	}
	switch {
	case ctl == nil:
		return Result{}, errors.New("sim: a controller is required")
	case target == nil:
		return Result{}, errors.New("sim: a target is required")
	case r.tick <= 0:
		return Result{}, fmt.Errorf("sim: tick must be > 0, got %v", r.tick)
	case r.limit <= 0 && r.windows <= 0:
		return Result{}, errors.New("sim: a run needs a stop condition: For(d) or UntilWindows(n)")
	}
	if a := r.agents; a != nil {
		if err := a.check(); err != nil {
			return Result{}, err
		}
		if _, isLoad := target.(LoadTarget); isLoad || !r.noise {
			return Result{}, errors.New("sim: WithAgents needs WithNoise and a target that is not a LoadTarget")
		}
	}
	rng := rand.New(rand.NewPCG(r.seed, r.seed^0x9e3779b97f4a7c15))
	if r.agents != nil {
		// The agents draw from a source of their own, so the target's
		// noise is the same as a single process's run with the same seed.
		r.agents.start(rand.New(rand.NewPCG(r.seed^0x5bd1e995, r.seed)))
	}
	var ok, failed uint64
	var counters governor.Counters = governor.CountersFunc(func() (uint64, uint64) { return ok, failed })
	if lt, isLoad := target.(LoadTarget); isLoad {
		counters = loadCounters{counters, lt, &ok, &failed}
	}
	offer, err := ctl.Begin(Epoch, counters)
	if err != nil {
		return Result{}, err
	}
	if st, ok := ctl.(interface{ Step() time.Duration }); ok && !r.tickSet {
		r.tick = st.Step() // the governor's reads: a fifth of a tick with early breach on
	}
	var s sampler
	var at time.Duration
	for step := 0; ; step++ {
		if (r.limit > 0 && at >= r.limit) || (r.windows > 0 && len(ctl.Windows()) >= r.windows) {
			break
		}
		if step >= maxSteps {
			return Result{}, fmt.Errorf("sim: run stopped after %d steps without meeting its stop condition", step)
		}
		eok, efail := target.Serve(at, offer, r.tick, rng)
		if eok < 0 || efail < 0 || math.IsNaN(eok+efail) || math.IsInf(eok+efail, 0) {
			return Result{}, fmt.Errorf("sim: target returned bad counts ok=%v failed=%v at %v", eok, efail, at)
		}
		dok, dfail := s.counts(eok, efail, r.noise, rng)
		if r.agents != nil {
			dok, dfail = r.agents.step(at, r.tick, dok, dfail)
		}
		ok += dok
		failed += dfail
		at += r.tick
		offer = ctl.Tick(Epoch.Add(at))
	}
	return Result{Controller: ctl.Name(), Windows: ctl.Windows(), Final: offer, OK: ok, Failed: failed, Elapsed: at}, nil
}

// loadCounters are a run's attempt counters with its LoadTarget's evidence
// (governor.LoadCounters). The run rounds (or samples) resolved attempts
// apart from the target, so Started is lifted to the run's own resolved
// count when rounding left it below.
type loadCounters struct {
	governor.Counters
	target     LoadTarget
	ok, failed *uint64
}

func (c loadCounters) Load() governor.Load {
	l := c.target.Load()
	l.Started = max(l.Started, *c.ok+*c.failed)
	return l
}

// sampler turns expected counts into whole attempts. It carries what
// rounding left over, so over a run the totals match the expectations to
// within one attempt.
//
// The expected totals are compensated sums (Kahan): a long run adds
// hundreds of thousands of fractional steps (204.8 attempts a step at
// 1024/s in 200 ms steps) to totals in the hundred millions, where plain
// float addition drifts by more than whole forgives and lands an attempt a
// step early or late now and then.
type sampler struct {
	ok, fail, all sum    // expected totals so far
	nOK, nFail    uint64 // whole attempts emitted so far
	n             uint64
}

// sum is a Kahan-compensated float sum.
type sum struct{ total, carry float64 }

func (s *sum) add(x float64) float64 {
	y := x - s.carry
	t := s.total + y
	s.carry = (t - s.total) - y
	s.total = t
	return t
}

func (s *sampler) counts(eok, efail float64, noise bool, rng *rand.Rand) (ok, failed uint64) {
	if !noise {
		ok, failed = whole(s.ok.add(eok))-s.nOK, whole(s.fail.add(efail))-s.nFail
		s.nOK += ok
		s.nFail += failed
		return ok, failed
	}
	n := whole(s.all.add(eok+efail)) - s.n
	s.n += n
	if n == 0 || efail == 0 {
		return n, 0
	}
	failed = binomial(n, efail/(eok+efail), rng)
	return n - failed, failed
}

// whole rounds an expected total down to whole attempts, forgiving the
// float error of a sum that should be exactly whole.
func whole(x float64) uint64 { return uint64(math.Floor(x + 1e-9)) }

// binomial draws from Binomial(n, p): exactly by counting Bernoulli trials
// for small n, by Poisson draws for the rarer outcome when it is rare, and
// by the normal approximation otherwise.
func binomial(n uint64, p float64, rng *rand.Rand) uint64 {
	switch {
	case p <= 0:
		return 0
	case p >= 1:
		return n
	case n <= 64:
		var k uint64
		for i := uint64(0); i < n; i++ {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	case float64(n)*p < 30:
		return min(n, poisson(float64(n)*p, rng))
	case float64(n)*(1-p) < 30:
		return n - min(n, poisson(float64(n)*(1-p), rng))
	}
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	k := math.Round(mean + sd*rng.NormFloat64())
	return uint64(math.Max(0, math.Min(float64(n), k)))
}

// poisson draws from Poisson(mean) by Knuth's product of uniforms; mean is
// small here (under 30), so the loop is short.
func poisson(mean float64, rng *rand.Rand) uint64 {
	limit, prod := math.Exp(-mean), rng.Float64()
	var k uint64
	for prod > limit {
		k++
		prod *= rng.Float64()
	}
	return k
}
