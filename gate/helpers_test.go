package gate_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/gate"
)

// t0 is where every fake clock in these tests starts.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFake returns a gate on a fresh fake clock.
func newFake(t testing.TB, cfg gate.Config, opts ...gate.Option) (*gate.Gate, *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(t0)
	g, err := gate.New(cfg, append([]gate.Option{gate.WithClock(fc)}, opts...)...)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return g, fc
}

// rateCfg is a rate gate whose offer and ceiling are both r.
func rateCfg(r float64) gate.Config {
	return gate.Config{Mode: gate.Rate, Floor: 0.01, Ceiling: r, Offer: r}
}

// waitFor yields until cond holds. It synchronises with goroutines the test
// started (a waiter has queued, a timer is armed); it never stands in for
// time passing, which the fake clock does. It fails after 10 s of real time
// so a broken gate cannot hang the run.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// drain admits with TryAcquire until the gate refuses and returns how many
// it admitted and the permits' due times.
func drain(g *gate.Gate) (n int, due []time.Time) {
	for {
		p, ok := g.TryAcquire()
		if !ok {
			return n, due
		}
		n++
		due = append(due, p.Due())
	}
}

// result is what one Acquire call returned.
type result struct {
	id  int
	p   gate.Permit
	err error
}

// acquireAsync starts Acquire in a goroutine and reports on out.
func acquireAsync(ctx context.Context, g *gate.Gate, id int, out chan<- result) {
	go func() {
		p, err := g.Acquire(ctx)
		out <- result{id, p, err}
	}()
}

// recv takes one result, failing after 10 s of real time.
func recv(t testing.TB, out <-chan result) result {
	t.Helper()
	select {
	case r := <-out:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for an Acquire to return")
		return result{}
	}
}

// noResult checks that no Acquire has returned.
func noResult(t testing.TB, out <-chan result) {
	t.Helper()
	runtime.Gosched()
	select {
	case r := <-out:
		t.Fatalf("Acquire %d returned (err %v) when it should still wait", r.id, r.err)
	default:
	}
}
