package phase

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// countWorker counts its iterations and runs hook, if set, in each.
type countWorker struct {
	n    *atomic.Uint64
	hook func(due time.Time)
}

func (w countWorker) Iterate(due time.Time) {
	w.n.Add(1)
	if w.hook != nil {
		w.hook(due)
	}
}
func (countWorker) Close() {}

// A constant arrival rate of 40/s for 1.5 s is 60 arrivals, as k6 runs it
// (an iteration at k/40 for k/40 < 1.5 s): the arrival due at 1.5 s is the
// next phase's business, however the end timer and the gate's race. On a
// machine too busy to keep up, the arrivals not made are counted missed:
// made + missed is 60 exactly, never 61.
func TestArrivalRateRunsExactlyTheSchedule(t *testing.T) {
	res := runArrivals(t, Config{Limits: governor.NewLimits(governor.Rate, 40), Duration: 1500 * time.Millisecond, MaxWorkers: 20})
	if res.Arrivals+res.Missed != 60 {
		t.Fatalf("%d arrivals + %d missed: want the schedule's 60 exactly", res.Arrivals, res.Missed)
	}
}

// runArrivals runs an open-loop phase of cfg on workers that count their
// iterations, and checks that its arrivals are those started or dropped,
// and its missed ones those the counters were told of.
func runArrivals(t *testing.T, cfg Config) *Result {
	t.Helper()
	c := &cleanCounters{}
	var ran atomic.Uint64
	cfg.Counters, cfg.PreAllocated = c, 4
	cfg.NewWorker = func(int) (Worker, error) { return countWorker{n: &ran}, nil }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d arrivals (%d ran, %d dropped) + %d missed", res.Arrivals, ran.Load(), c.dropped.Load(), res.Missed)
	if c.missed.Load() != res.Missed || ran.Load()+c.dropped.Load() != res.Arrivals {
		t.Fatalf("%d arrivals, %d ran, %d dropped; %d missed, the counters told of %d: want them to agree",
			res.Arrivals, ran.Load(), c.dropped.Load(), res.Missed, c.missed.Load())
	}
	return res
}

// A generator that falls behind: the scheduler stalls for 100 ms (a
// dropped arrival's hook blocks it, as a starved host would), twice, while
// one worker at a time sends real requests to a loopback server. The
// arrivals it never made are counted missed, and every one of the
// schedule's 200 (200/s for 1 s) is sent, dropped or missed: the totals add
// up exactly, however slow the machine.
func TestMissedArrivalsCloseTheAccount(t *testing.T) {
	var hits atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond) // a slow answer: the one worker is busy and arrivals drop
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	c := &cleanCounters{}
	var ran, stalls atomic.Uint64
	get := func(time.Time) {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
	}
	p, err := New(Config{Limits: governor.NewLimits(governor.Rate, 200), Duration: time.Second, Counters: c,
		MaxWorkers: 1, Grace: 5 * time.Second,
		NewWorker: func(int) (Worker, error) { return countWorker{n: &ran, hook: get}, nil },
		Dropped: func() {
			if n := c.dropped.Load(); n == 5 || n == 50 {
				stalls.Add(1)
				<-time.After(100 * time.Millisecond) // the host stalls: the scheduler is late
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sent, dropped, missed := ran.Load(), c.dropped.Load(), c.missed.Load()
	t.Logf("sent %d (server saw %d), dropped %d, missed %d, %d stalls", sent, hits.Load(), dropped, missed, stalls.Load())
	if sent+dropped+missed != 200 || sent+dropped != res.Arrivals || missed != res.Missed || hits.Load() != sent {
		t.Fatalf("sent %d + dropped %d + missed %d (result: %d arrivals, %d missed; server saw %d): want the schedule's 200 exactly",
			sent, dropped, missed, res.Arrivals, res.Missed, hits.Load())
	}
	if stalls.Load() == 0 || missed < 10 {
		t.Fatalf("%d stalls, %d missed: want the stalls to have made the generator miss arrivals", stalls.Load(), missed)
	}
}

// rampRate is a ramping-arrival-rate schedule: startRate 0, a stage up to
// 200/s over 2 s, then 200/s for 0.5 s (k6's stages, linear).
func rampRate(t time.Duration) float64 {
	if s := t.Seconds(); s < 2 {
		return 100 * s
	}
	return 200
}

// A ramping arrival rate starts as many iterations as the area under its
// stages, as k6 does (the rate ramps linearly; an iteration starts each
// time the area reaches a whole number, the first at 0): 0.5 × 200 × 2 +
// 200 × 0.5 = 300 over 2.5 s. Read at the start of each RampStep the ramp
// ran 275.
func TestRampingArrivalRateRunsTheArea(t *testing.T) {
	res := runArrivals(t, Config{Limits: governor.NewLimits(governor.Rate, 200), Ceiling: rampRate, Duration: 2500 * time.Millisecond, MaxWorkers: 50})
	// The ramp is read on a real ticker: a tick a few ms late moves the
	// area by a fraction of an arrival either way.
	if n := res.Arrivals + res.Missed; n < 299 || n > 301 {
		t.Fatalf("%d arrivals + %d missed: want the stages' area, 300", res.Arrivals, res.Missed)
	}
}
