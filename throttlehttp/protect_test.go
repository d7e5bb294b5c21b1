package throttlehttp

import (
	"context"
	"fmt"
	"math"
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
// near the failure bound with it.
//
// Nothing here depends on how fast the machine is. The capacity is low
// (30/s) so that any machine's client overwhelms it unthrottled: half the
// answers fail from 45/s on, all from 90/s (a loaded 2-core machine running
// the suite twice managed 66/s, an idle one thousands). The governed run is
// measured in windows, not seconds: the search gets 8 windows, then the next
// 6 windows' attempts are the settled stretch, however long they take.
func TestProtectsAFragileServer(t *testing.T) {
	const (
		capacity      = 30.0
		warm, stretch = 8, 6
	)
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

	base := &http.Transport{MaxIdleConnsPerHost: workers}
	defer base.CloseIdleConnections()
	l := fastLimits(50*capacity, 3, 10)
	l.Window = 400 * time.Millisecond // 12 attempts at the capacity: a window's 10 in one
	var (
		mu      sync.Mutex
		windows []governor.Window
	)
	tr, err := New(base, WithLimits(l), quiet,
		WithGovernorOptions(governor.WithTick(25*time.Millisecond),
			governor.WithObserver(func(w governor.Window) { mu.Lock(); windows = append(windows, w); mu.Unlock() })))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var cur atomic.Pointer[tally]
	cur.Store(&tally{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*testwait.Deadline)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); drive(ctx, &http.Client{Transport: tr}, srv.URL, workers, 100_000, &cur) }()
	took := testwait.Until(t, 3*testwait.Deadline, fmt.Sprintf("%d governed windows", warm+stretch), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(windows) >= warm+stretch
	})
	cancel()
	<-done
	tr.Close()
	var ok, failed uint64
	mu.Lock()
	for _, w := range windows[warm : warm+stretch] {
		ok, failed = ok+w.OK, failed+w.Failed
	}
	mu.Unlock()
	n := ok + failed
	governed := float64(failed) / math.Max(1, float64(n))
	t.Logf("governed: offer %.0f/s, settled stretch %d attempts, attempt failure %.1f%% (%d windows in %v)", tr.Offer(), n, governed*100, warm+stretch, took)

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

	// A judged window has MinAttempts; a no-evidence hold may have fewer.
	if n < stretch*l.MinAttempts/2 {
		t.Errorf("governed run made only %d attempts in its %d settled windows: throttled to a standstill", n, stretch)
	}
	// Near, not at: the collapse model meters the last second's arrivals,
	// so the windows just after each probe above the capacity still fail
	// at the probe's load (seen under load: 18.8 %, against 99.9 %
	// unthrottled).
	if governed > 0.25 {
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
