package phase

import (
	"context"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// During an outage a phase starts only governor.OutageProbes iterations a
// tick; the held-back ones are neither arrivals nor drops. Outside one,
// every iteration starts.
func TestOutageProbesPerTick(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	const tick = 100 * time.Millisecond
	p := &Phase{cfg: Config{Tick: tick}, clk: clk}
	admitted := func() int {
		n := 0
		for range 50 {
			if ok, _ := p.admit(); ok {
				n++
			}
		}
		return n
	}
	if n := admitted(); n != 50 {
		t.Fatalf("no outage: %d of 50 admitted", n)
	}
	p.probe.mu.Lock()
	p.probe.out = true
	p.probe.on.Store(true)
	p.probe.mu.Unlock()
	if n := admitted(); n != governor.OutageProbes {
		t.Errorf("out, first tick: %d admitted, want %d", n, governor.OutageProbes)
	}
	if ok, next := p.admit(); ok || next != clk.Now().Add(tick) {
		t.Errorf("out, probes used: admitted %v, next at %v, want the next tick %v", ok, next, clk.Now().Add(tick))
	}
	clk.Advance(tick / 2)
	if n := admitted(); n != 0 {
		t.Errorf("out, same tick: %d more admitted", n)
	}
	clk.Advance(tick / 2)
	if n := admitted(); n != governor.OutageProbes {
		t.Errorf("out, next tick: %d admitted, want %d", n, governor.OutageProbes)
	}

	// A closed-loop worker waits for the next tick's probe, or its end.
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool, 1)
	go func() { got <- p.waitProbe(ctx) }()
	testwait.Until(t, 10*time.Second, "the worker to wait for the next tick", func() bool { return clk.Waiters() > 0 })
	clk.Advance(tick)
	if !testwait.Receive(t, got, "the probe") {
		t.Error("the worker was not let through at the next tick")
	}
	for range governor.OutageProbes - 1 { // the rest of this tick's probes
		if !p.waitProbe(ctx) {
			t.Fatal("a probe of the tick held back")
		}
	}
	go func() { got <- p.waitProbe(ctx) }() // one too many: waits
	testwait.Until(t, 10*time.Second, "the worker to wait again", func() bool { return clk.Waiters() > 0 })
	cancel()
	if testwait.Receive(t, got, "the worker to give up") {
		t.Error("a worker past the tick's probes started after its phase ended")
	}
}
