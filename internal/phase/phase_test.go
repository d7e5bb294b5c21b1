package phase

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cleanCounters are a target that answers every attempt at once and well:
// each read of the governor finds 100 more ok attempts, 1 ms each. What
// the phase itself counts (drops, lag, the watch's verdict) is kept.
type cleanCounters struct {
	ok      atomic.Uint64
	dropped atomic.Uint64
	missed  atomic.Uint64
	lagN    atomic.Uint64
	lagSum  atomic.Int64
	sat     atomic.Bool
	readN   atomic.Uint64
	readSum atomic.Int64
}

func (c *cleanCounters) Attempts() (ok, failed uint64) { return c.ok.Add(100), 0 }
func (c *cleanCounters) Load() governor.Load {
	n := c.ok.Load()
	return governor.Load{Started: n, Dropped: c.dropped.Load(), Latency: time.Duration(n) * time.Millisecond, GeneratorSaturated: c.sat.Load()}
}
func (c *cleanCounters) Drop()               { c.dropped.Add(1) }
func (c *cleanCounters) Miss(n uint64)       { c.missed.Add(n) }
func (c *cleanCounters) Lag(d time.Duration) { c.lagSum.Add(int64(d)); c.lagN.Add(1) }
func (c *cleanCounters) LagTotal() (time.Duration, uint64) {
	return time.Duration(c.lagSum.Load()), c.lagN.Load()
}
func (c *cleanCounters) SetSaturated(now bool, _ float64) { c.sat.Store(now) }
func (c *cleanCounters) ReadDelay() (time.Duration, uint64, time.Duration) {
	return time.Duration(c.readSum.Load()), c.readN.Load(), 0
}

// heldWorker holds its iteration until the phase stops: a closed-loop
// worker that keeps its permit, so the workers made are the offer reached.
type heldWorker struct {
	stop <-chan struct{}
	runs *atomic.Int64
}

func (w heldWorker) Iterate(time.Time) {
	w.runs.Add(1)
	<-w.stop
}
func (heldWorker) Close() {}

// rampVUs is a ramping-vus schedule: 0 → 10 VUs over 4 s, 10 for 4 s,
// then down to 2 over 2 s.
func rampVUs(t time.Duration) float64 {
	s := t.Seconds()
	switch {
	case s < 4:
		return math.Round(10 * s / 4)
	case s < 8:
		return 10
	case s < 10:
		return math.Round(10 - 8*(s-8)/2)
	}
	return 2
}

// stepClock is a fake clock that knows its tickers, so a test can wait
// until every goroutine has taken the tick it was given before it moves
// time on: no tick is dropped for a receiver the test outran.
type stepClock struct {
	*clock.Fake
	mu      sync.Mutex
	tickers map[*stepTicker]bool
}

type stepTicker struct {
	clock.Ticker
	c *stepClock
	d time.Duration
}

func (t *stepTicker) Stop() {
	t.c.mu.Lock()
	delete(t.c.tickers, t)
	t.c.mu.Unlock()
	t.Ticker.Stop()
}

func (c *stepClock) NewTicker(d time.Duration) clock.Ticker {
	t := &stepTicker{Ticker: c.Fake.NewTicker(d), c: c, d: d}
	c.mu.Lock()
	c.tickers[t] = true
	c.mu.Unlock()
	return t
}

// has reports whether a ticker of period d is live: a ticker made after
// the test moved time would tick off the test's grid and the test would
// wait for a reading that never comes.
func (c *stepClock) has(d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.tickers {
		if t.d == d {
			return true
		}
	}
	return false
}

// taken reports whether every live ticker's tick has been received.
func (c *stepClock) taken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.tickers {
		if len(t.C()) > 0 {
			return false
		}
	}
	return true
}

// step advances the clock by d and waits until its ticks are taken.
func (c *stepClock) step(t *testing.T, d time.Duration) {
	c.Advance(d)
	testwait.Until(t, 10*time.Second, "every ticker's tick to be taken", c.taken)
}

// runRamp runs a closed-loop phase on the schedule with a fake clock,
// moved half a governor tick at a time; at every RampStep, once the ramp
// has read the schedule, check gets the elapsed time and the status.
func runRamp(t *testing.T, governed bool, check func(elapsed time.Duration, st Status)) *Result {
	t.Helper()
	clk := &stepClock{Fake: clock.NewFake(time.Unix(1_000_000, 0)), tickers: map[*stepTicker]bool{}}
	const tick = 100 * time.Millisecond
	l := governor.NewLimits(governor.Concurrency, 10)
	l.Window, l.MinAttempts = 500*time.Millisecond, 1
	var runs atomic.Int64
	var p *Phase
	p, err := New(Config{
		Limits: l, Governed: governed, Ceiling: rampVUs, Duration: 10 * time.Second, Grace: -1,
		Tick: tick, Clock: clk, Counters: &cleanCounters{}, Watch: WatchConfig{CPU: -1},
		Governor:  []governor.Option{governor.WithEarlyBreach(false), governor.WithEvidence(governor.EvidenceNone)},
		NewWorker: func(int) (Worker, error) { return heldWorker{stop: p.Stopping(), runs: &runs}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	wait := runStarted(t, p)
	testwait.Until(t, 10*time.Second, "the ramp's ticker", func() bool { return clk.has(RampStep) })
	for at := time.Duration(0); at < 10*time.Second; at += tick / 2 {
		if at > 0 {
			clk.step(t, tick/2)
		}
		if at%RampStep != 0 {
			continue
		}
		want := math.Max(rampVUs(at), 1)
		testwait.Until(t, 10*time.Second, "the ramp to read the schedule", func() bool { return p.Status().Ceiling == want })
		check(at, p.Status())
	}
	clk.Advance(time.Second)
	return wait()
}

// runStarted runs p in the background until it has started; wait waits
// for its end and returns its result.
func runStarted(t *testing.T, p *Phase) (wait func() *Result) {
	t.Helper()
	var res *Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, _ = p.Run(context.Background())
	}()
	testwait.Until(t, 10*time.Second, "the phase to start", p.Running)
	return func() *Result {
		testwait.Receive(t, done, "the phase to end")
		return res
	}
}

// Governed, a ramping executor's authored value at each moment is the
// ceiling: the offer climbs on its own (from the floor, doubling), never
// past what the author would have run then, and follows a ramp down.
func TestRampCapsTheGovernedOffer(t *testing.T) {
	var peak, last float64
	var mu sync.Mutex
	res := runRamp(t, true, func(at time.Duration, st Status) {
		mu.Lock()
		defer mu.Unlock()
		if want := math.Max(rampVUs(at), 1); st.Offer > want {
			t.Errorf("at %v the offer is %v, above the authored %v", at, st.Offer, want)
		}
		if st.Workers > 10 {
			t.Errorf("at %v %d workers, above the highest stage", at, st.Workers)
		}
		peak, last = max(peak, st.Offer), st.Offer
	})
	if peak != 10 {
		t.Errorf("the offer peaked at %v: a clean target lets the governor climb to the stage's 10", peak)
		for _, w := range res.Windows {
			t.Logf("%v %v %+v", w.Start.Unix()%100, w.Offer, w.Decision)
		}
	}
	if last > 3 {
		t.Errorf("the offer ended at %v: it must follow the ramp down to 2", last)
	}
	if len(res.Windows) == 0 {
		t.Error("no window judged")
	}
}

// Not governed, the offer is the authored value at each moment.
func TestRampAsAuthored(t *testing.T) {
	runRamp(t, false, func(at time.Duration, st Status) {
		if want := math.Max(rampVUs(at), 1); st.Offer != want {
			t.Errorf("at %v the offer is %v, want the authored %v", at, st.Offer, want)
		}
	})
}

// countingWorker counts its iterations.
type countingWorker struct{ runs *atomic.Int64 }

func (w countingWorker) Iterate(time.Time) { w.runs.Add(1) }
func (countingWorker) Close()              {}

// A fixed amount of iterations runs exactly, with no gate and no governor,
// and the phase ends by itself when they are done.
func TestIterations(t *testing.T) {
	for _, c := range []struct {
		it   Iterations
		want int64
	}{
		{Iterations{Count: 10, Workers: 3}, 10},
		{Iterations{Count: 4, Workers: 3, PerWorker: true}, 12},
	} {
		var runs atomic.Int64
		p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, float64(c.it.Workers)), Iterations: &c.it,
			Counters: &cleanCounters{}, NewWorker: func(int) (Worker, error) { return countingWorker{&runs}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if runs.Load() != c.want || res.Workers != c.it.Workers || res.Interrupted || p.Governed() {
			t.Errorf("%+v: %d iterations on %d workers (interrupted %v), want %d", c.it, runs.Load(), res.Workers, res.Interrupted, c.want)
		}
	}
}

// A worker that cannot be made is reported and ends; the others run.
func TestWorkerFailed(t *testing.T) {
	var failed atomic.Int64
	var runs atomic.Int64
	p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, 2), Iterations: &Iterations{Count: 3, Workers: 2, PerWorker: true},
		Counters: &cleanCounters{}, WorkerFailed: func(error) { failed.Add(1) },
		NewWorker: func(id int) (Worker, error) {
			if id == 1 {
				return nil, context.Canceled
			}
			return countingWorker{&runs}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if failed.Load() != 1 || runs.Load() != 3 {
		t.Errorf("%d failed, %d iterations: want 1 and the other worker's 3", failed.Load(), runs.Load())
	}
}

// Bad settings are refused before anything runs.
func TestConfigRefused(t *testing.T) {
	nw := func(int) (Worker, error) { return countingWorker{}, nil }
	for name, cfg := range map[string]Config{
		"no counters": {Limits: governor.NewLimits(governor.Rate, 10), NewWorker: nw},
		"no workers":  {Limits: governor.NewLimits(governor.Rate, 10), Counters: &cleanCounters{}},
		"iterations":  {Limits: governor.NewLimits(governor.Concurrency, 1), Counters: &cleanCounters{}, NewWorker: nw, Iterations: &Iterations{}},
		"duration":    {Limits: governor.NewLimits(governor.Rate, 10), Counters: &cleanCounters{}, NewWorker: nw, Duration: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
