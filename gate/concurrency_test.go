package gate_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/gate"
)

func concCfg(limit float64) gate.Config {
	return gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 1000, Offer: limit}
}

// enter counts one more in flight and raises *maxSeen to the new count if it
// is higher; it returns the new count.
func enter(inFlight, maxSeen *atomic.Int64) int64 {
	n := inFlight.Add(1)
	for {
		m := maxSeen.Load()
		if n <= m || maxSeen.CompareAndSwap(m, n) {
			return n
		}
	}
}

func TestConcurrencyNeverAboveTheLimit(t *testing.T) {
	const (
		limit      = 7
		goroutines = 300
		iterations = 40
	)
	g, err := gate.New(concCfg(limit))
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, maxSeen atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < iterations; j++ {
				p, err := g.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				enter(&inFlight, &maxSeen)
				if s := g.Stats().InFlight; s > limit {
					t.Errorf("gate reports %d in flight, limit %d", s, limit)
				}
				inFlight.Add(-1)
				p.Release()
			}
		}()
	}
	wg.Wait()
	if m := maxSeen.Load(); m > limit || m < 1 {
		t.Errorf("max in flight seen = %d, want 1..%d", m, limit)
	}
	s := g.Stats()
	if s.InFlight != 0 || s.Waiting != 0 || s.Admitted != goroutines*iterations {
		t.Errorf("final stats %+v, want 0 in flight, 0 waiting, %d admitted", s, goroutines*iterations)
	}
}

func TestConcurrencyLimitChangesUnderLoad(t *testing.T) {
	// Hundreds of goroutines while the limit moves between 2 and 12. A
	// lowered limit lets running work finish, so the bound that must hold
	// is the highest limit applied; and once the limit has stayed low and
	// the work admitted before has drained, the low bound holds again.
	g, err := gate.New(concCfg(12))
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, maxSeen atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				p, err := g.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				enter(&inFlight, &maxSeen)
				inFlight.Add(-1)
				p.Release()
			}
		}()
	}
	for i := 0; i < 200; i++ {
		g.Apply(float64(2 + i%11))
	}
	g.Apply(2)
	waitFor(t, "work admitted before the last lowering to drain", func() bool { return g.Stats().InFlight <= 2 })
	// From here the gate holds at most 2 permits, and the test's count is
	// never above the gate's (it counts after Acquire, before Release).
	maxSeen.Store(0)
	base := g.Stats().Admitted
	waitFor(t, "1000 admissions at the low limit", func() bool { return g.Stats().Admitted >= base+1000 })
	stop.Store(true)
	g.Apply(1000) // let everyone out
	wg.Wait()
	if m := maxSeen.Load(); m > 2 {
		t.Errorf("max in flight at limit 2 = %d", m)
	}
	if s := g.Stats(); s.InFlight != 0 || s.Waiting != 0 {
		t.Errorf("final stats %+v, want nothing in flight or waiting", s)
	}
}

func TestConcurrencyLowerThenRaise(t *testing.T) {
	g, fc := newFake(t, concCfg(5))
	held := make([]gate.Permit, 0, 5)
	for i := 0; i < 5; i++ {
		p, ok := g.TryAcquire()
		if !ok {
			t.Fatalf("TryAcquire %d refused under the limit", i)
		}
		held = append(held, p)
	}
	if _, ok := g.TryAcquire(); ok {
		t.Fatal("admitted a sixth at limit 5")
	}
	if applied := g.Apply(2); applied != 2 {
		t.Fatalf("Apply(2) = %v", applied)
	}
	if s := g.Stats(); s.InFlight != 5 {
		t.Fatalf("lowering the limit changed in-flight to %d; running work must not be cancelled", s.InFlight)
	}
	out := make(chan result, 4)
	for i := 0; i < 4; i++ {
		acquireAsync(context.Background(), g, i, out)
		waitFor(t, "waiter to queue", func() bool { return g.Stats().Waiting == int64(i+1) })
	}
	// 5 → 3 in flight: still not below 2.
	for _, p := range held[:2] {
		p.Release()
	}
	held = held[2:]
	noResult(t, out)
	if s := g.Stats(); s.InFlight != 3 || s.Waiting != 4 {
		t.Fatalf("stats %+v, want 3 in flight, 4 waiting", s)
	}
	held[0].Release() // 2 in flight: at the limit, nobody is admitted
	held = held[1:]
	if s := g.Stats(); s.InFlight != 2 || s.Waiting != 4 {
		t.Fatalf("stats %+v, want 2 in flight, 4 waiting", s)
	}
	held[0].Release() // 1 in flight: the first waiter goes in
	held = held[1:]
	first := recv(t, out)
	if first.id != 0 || first.err != nil {
		t.Fatalf("first admission went to %d (err %v), want 0", first.id, first.err)
	}
	if !first.p.Due().Equal(t0) {
		t.Errorf("concurrency Due = %v, want the admission time %v", first.p.Due(), t0)
	}
	// Raising wakes waiters at once, with no release.
	fc.Advance(time.Second)
	if applied := g.Apply(4); applied != 4 {
		t.Fatalf("Apply(4) = %v", applied)
	}
	// Both are admitted by the Apply; their goroutines report in either order.
	got := map[int]bool{}
	for range 2 {
		r := recv(t, out)
		if r.err != nil || got[r.id] || (r.id != 1 && r.id != 2) {
			t.Fatalf("after raising, admission went to %d (err %v), want 1 and 2", r.id, r.err)
		}
		got[r.id] = true
		if !r.p.Due().Equal(t0.Add(time.Second)) {
			t.Errorf("Due = %v, want the raise's time", r.p.Due().Sub(t0))
		}
		held = append(held, r.p)
	}
	if s := g.Stats(); s.InFlight != 4 || s.Waiting != 1 {
		t.Fatalf("stats %+v, want 4 in flight, 1 waiting", s)
	}
	first.p.Release()
	if r := recv(t, out); r.id != 3 {
		t.Fatalf("last admission went to %d, want 3", r.id)
	} else {
		r.p.Release()
	}
	for _, p := range held {
		p.Release()
	}
	if s := g.Stats(); s.InFlight != 0 || s.Admitted != 9 {
		t.Errorf("final stats %+v, want 0 in flight, 9 admitted", s)
	}
}

func TestConcurrencyFIFOAndNoStarvation(t *testing.T) {
	g, _ := newFake(t, concCfg(1))
	p, _ := g.TryAcquire()
	const n = 30
	out := make(chan result, 2*n)
	for i := 0; i < n; i++ {
		acquireAsync(context.Background(), g, i, out)
		waitFor(t, "waiter to queue", func() bool { return g.Stats().Waiting == int64(i+1) })
	}
	next := n
	for want := 0; want < n; want++ {
		// A new arrival each turn, and a TryAcquire: neither overtakes.
		acquireAsync(context.Background(), g, next, out)
		next++
		waitFor(t, "arrival to queue", func() bool { return g.Stats().Waiting == n+1 })
		p.Release()
		if _, ok := g.TryAcquire(); ok {
			t.Fatal("TryAcquire jumped the queue")
		}
		r := recv(t, out)
		if r.id != want {
			t.Fatalf("turn %d went to waiter %d: not first come, first served", want, r.id)
		}
		p = r.p
	}
	for want := n; want < 2*n; want++ {
		p.Release()
		r := recv(t, out)
		if r.id != want {
			t.Fatalf("turn went to waiter %d, want %d", r.id, want)
		}
		p = r.p
	}
	p.Release()
}

func TestConcurrencyCancellationKeepsCountsConsistent(t *testing.T) {
	g, _ := newFake(t, concCfg(2))
	a, _ := g.TryAcquire()
	b, _ := g.TryAcquire()
	const n = 50
	out := make(chan result, n)
	cancels := make([]context.CancelFunc, n)
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		acquireAsync(ctx, g, i, out)
		waitFor(t, "waiter to queue", func() bool { return g.Stats().Waiting == int64(i+1) })
	}
	for i := 0; i < n; i += 2 {
		cancels[i]()
	}
	for i := 0; i < n/2; i++ {
		if r := recv(t, out); !errors.Is(r.err, context.Canceled) || r.id%2 != 0 {
			t.Fatalf("waiter %d returned %v, want only even ids cancelled", r.id, r.err)
		}
	}
	if s := g.Stats(); s.Waiting != n/2 || s.Cancelled != n/2 || s.InFlight != 2 || s.Admitted != 2 {
		t.Fatalf("stats after cancelling %+v", s)
	}
	// Each odd waiter, admitted in turn, releases at once.
	a.Release()
	b.Release()
	for i := 0; i < n/2; i++ {
		r := recv(t, out)
		if r.err != nil || r.id%2 != 1 {
			t.Fatalf("waiter %d: %v", r.id, r.err)
		}
		r.p.Release()
	}
	for _, c := range cancels {
		c()
	}
	s := g.Stats()
	if s.InFlight != 0 || s.Waiting != 0 || s.Admitted != 2+n/2 || s.Cancelled != n/2 {
		t.Errorf("final stats %+v, want 0 in flight, 0 waiting, %d admitted, %d cancelled", s, 2+n/2, n/2)
	}
}

func TestConcurrencyCancellationRacingReleases(t *testing.T) {
	// Waiters with short real deadlines race releases; whatever wins,
	// every call is counted once and nothing leaks.
	g, err := gate.New(concCfg(3))
	if err != nil {
		t.Fatal(err)
	}
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*50*time.Microsecond)
				p, err := g.Acquire(ctx)
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Acquire: %v", err)
					}
					failed.Add(1)
					continue
				}
				ok.Add(1)
				p.Release()
			}
		}(i)
	}
	wg.Wait()
	s := g.Stats()
	if s.InFlight != 0 || s.Waiting != 0 {
		t.Errorf("after all calls returned: %+v, want nothing in flight or waiting", s)
	}
	if s.Admitted != uint64(ok.Load()) || s.Cancelled != uint64(failed.Load()) {
		t.Errorf("stats count %d admitted, %d cancelled; callers saw %d, %d", s.Admitted, s.Cancelled, ok.Load(), failed.Load())
	}
	// The gate still works at its limit.
	for i := 0; i < 3; i++ {
		if _, ok := g.TryAcquire(); !ok {
			t.Fatalf("TryAcquire %d refused on an idle gate", i)
		}
	}
}

func TestReleaseIsSafeAgainstDoubleRelease(t *testing.T) {
	g, _ := newFake(t, concCfg(2))
	p, _ := g.TryAcquire()
	cp := p
	p.Release()
	p.Release()
	cp.Release()
	if s := g.Stats(); s.InFlight != 0 {
		t.Fatalf("in flight = %d after releasing one permit three times", s.InFlight)
	}
	// The slot is reused by a new permit; the old one must not free it.
	q, _ := g.TryAcquire()
	r, _ := g.TryAcquire()
	p.Release()
	cp.Release()
	if s := g.Stats(); s.InFlight != 2 {
		t.Fatalf("in flight = %d: a stale permit released someone else's slot", s.InFlight)
	}
	if _, ok := g.TryAcquire(); ok {
		t.Fatal("admitted a third at limit 2")
	}
	q.Release()
	r.Release()
	if s := g.Stats(); s.InFlight != 0 {
		t.Fatalf("in flight = %d, want 0", s.InFlight)
	}
	gate.Permit{}.Release() // the zero Permit releases nothing
	rg, _ := newFake(t, rateCfg(10))
	rp, _ := rg.TryAcquire()
	rp.Release() // rate mode: nothing to release
	rp.Release()
}

func TestAcquireWithDoneContextFailsAtOnce(t *testing.T) {
	for _, cfg := range []gate.Config{concCfg(5), rateCfg(100)} {
		g, _ := newFake(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := g.Acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%v: Acquire with a done context = %v, want context.Canceled", cfg.Mode, err)
		}
		if s := g.Stats(); s.Admitted != 0 || s.Cancelled != 1 || s.InFlight != 0 {
			t.Errorf("%v: stats %+v, want nothing admitted, 1 cancelled", cfg.Mode, s)
		}
	}
}

func TestNoAllocationPerAdmission(t *testing.T) {
	ctx := context.Background()
	cg, _ := gate.New(concCfg(1))
	if a := testing.AllocsPerRun(1000, func() {
		p, err := cg.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}); a != 0 {
		t.Errorf("concurrency Acquire+Release allocates %v per admission", a)
	}
	rg, _ := gate.New(rateCfg(1e9))
	if a := testing.AllocsPerRun(1000, func() {
		if _, err := rg.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("rate Acquire allocates %v per admission", a)
	}
}
