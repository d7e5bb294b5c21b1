package throttlehttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/testwait"
)

// These tests drive real HTTP over loopback against the built-in target, in
// real time, with short windows: a few seconds each, bounded in requests.

// fastLimits are rate-mode limits with quarter-second windows.
func fastLimits(ceiling, floor, start float64) governor.Limits {
	l := governor.NewLimits(governor.Rate, ceiling)
	l.Floor, l.Start = floor, start
	l.Window = 250 * time.Millisecond
	l.MinAttempts = 10
	return l
}

// tally counts a load's outcomes, as DefaultClassifier sees them, between
// marks.
type tally struct{ ok, failed atomic.Int64 }

func (c *tally) frac() float64 {
	ok, failed := c.ok.Load(), c.failed.Load()
	if ok+failed == 0 {
		return 0
	}
	return float64(failed) / float64(ok+failed)
}

// drive runs workers closed-loop GETs through client until ctx ends or max
// requests have been sent, counting outcomes into *cur (swappable so a test
// can measure a stretch of the run).
func drive(ctx context.Context, client *http.Client, url string, workers int, max int64, cur *atomic.Pointer[tally]) {
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil && sent.Add(1) <= max {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := client.Do(req)
				if ctx.Err() != nil {
					return // stopped at the gate or cut off: not an outcome
				}
				t := cur.Load()
				if DefaultClassifier(req, resp, err) {
					t.failed.Add(1)
				} else {
					t.ok.Add(1)
				}
				if err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
}

// TestProtectsAFragileServer: the same fragile (collapse-model) server, hit by
// the same closed-loop client, collapses without the transport and stays
// near the failure bound with it. The bound on the governed stretch's
// attempts asks only that the governor did not throttle to a standstill: how
// many a second a loaded machine manages is not the transport's doing.
func TestProtectsAFragileServer(t *testing.T) {
	const capacity = 200.0
	cfg := target.NewConfig(capacity)
	cfg.Model = target.Collapse
	cfg.Latency = 2 * time.Millisecond
	tgt, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tgt)
	defer srv.Close()
	const workers = 16

	// Governed: 4 s; the last 1.5 s are measured.
	base := &http.Transport{MaxIdleConnsPerHost: workers}
	defer base.CloseIdleConnections()
	tr, err := New(base, WithLimits(fastLimits(50*capacity, 10, 50)), quiet,
		WithGovernorOptions(governor.WithTick(25*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var cur atomic.Pointer[tally]
	warm, settled := &tally{}, &tally{}
	cur.Store(warm)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	time.AfterFunc(2500*time.Millisecond, func() { cur.Store(settled) })
	drive(ctx, &http.Client{Transport: tr}, srv.URL, workers, 100_000, &cur)
	tr.Close()
	governed := settled.frac()
	n := settled.ok.Load() + settled.failed.Load()
	t.Logf("governed: offer %.0f/s, settled stretch %d attempts (%.0f/s), attempt failure %.1f%%", tr.Offer(), n, float64(n)/1.5, governed*100)

	// Unthrottled: the same client without the transport, 1.5 s.
	plain := &http.Transport{MaxIdleConnsPerHost: workers}
	defer plain.CloseIdleConnections()
	raw := &tally{}
	cur.Store(raw)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	drive(ctx2, &http.Client{Transport: plain}, srv.URL, workers, 100_000, &cur)
	unthrottled := raw.frac()
	t.Logf("unthrottled: %d attempts, attempt failure %.1f%%", raw.ok.Load()+raw.failed.Load(), unthrottled*100)

	if n < 30 {
		t.Errorf("governed run made only %d attempts in its settled stretch: throttled to a standstill", n)
	}
	if governed > 0.15 {
		t.Errorf("governed attempt failure %.1f%%, want near the 5%% bound", governed*100)
	}
	if unthrottled < 0.5 {
		t.Errorf("unthrottled attempt failure %.1f%%: the server did not collapse, so the comparison shows nothing", unthrottled*100)
	}
}

// TestRecoversWhenServerRecovers: the governed offer climbs to the server's
// capacity, falls to the floor while the server is down and climbs back once
// it is up again. Each step waits for the offer with testwait's generous
// deadline: climbing back from the floor takes three clean windows to clear
// the memory of the outage and then a doubling per window, and at the floor
// (20/s) a window needs half a second for its 10 attempts, longer when the
// machine is loaded.
func TestRecoversWhenServerRecovers(t *testing.T) {
	const capacity = 200.0
	tgt, err := target.New(target.NewConfig(capacity))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tgt)
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 8}
	defer base.CloseIdleConnections()
	const floor = 20.0
	tr, err := New(base, WithLimits(fastLimits(10*capacity, floor, 50)), quiet,
		WithGovernorOptions(governor.WithTick(25*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 4*testwait.Deadline)
	defer cancel()
	var cur atomic.Pointer[tally]
	cur.Store(&tally{})
	done := make(chan struct{})
	go func() { defer close(done); drive(ctx, &http.Client{Transport: tr}, srv.URL, 8, 100_000, &cur) }()
	defer func() { cancel(); <-done }()

	reach := func(what string, cond func(float64) bool) {
		t.Helper()
		took := testwait.Until(t, testwait.Deadline, what, func() bool { return cond(tr.Offer()) })
		t.Logf("%s: offer %.0f after %v", what, tr.Offer(), took)
	}
	reach("the offer to climb to capacity", func(o float64) bool { return o >= 0.8*capacity })
	tgt.SetDown(true)
	reach("the offer to fall to the floor while down", func(o float64) bool { return o == floor })
	tgt.SetDown(false)
	reach("the offer to climb back once up", func(o float64) bool { return o >= 0.8*capacity })
}
