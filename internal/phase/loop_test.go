package phase

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
)

// heldLoop is a loop host whose iterations each hold until the phase
// stops, like heldWorker: the iterations in flight are the offer the gate
// lets begin, and the slots made are the workers the phase asked for. It
// tries its idle slots whenever the phase wakes it.
type heldLoop struct {
	wake     chan struct{}
	begun    *atomic.Int64 // iterations begun, all loops
	refused  *atomic.Int64 // Begin refusals, all loops
	ended    *atomic.Int64
	closed   *atomic.Int64
	mu       sync.Mutex
	held     []Ticket
	slots    int
	badState atomic.Bool
}

func (h *heldLoop) Run(l *Lane) {
	l.OnWake(func() {
		select {
		case h.wake <- struct{}{}:
		default:
		}
	})
	for {
		if n := l.Want() - h.slots; n > 0 {
			h.slots += n
			l.Grew(n)
		}
		select {
		case <-l.Stopping():
			for _, t := range h.held {
				l.End(t)
				h.ended.Add(1)
			}
			h.held = nil
			if _, ok := l.Begin(); ok {
				h.badState.Store(true) // a stopping phase began an iteration
			}
			return
		default:
		}
		for len(h.held) < h.slots {
			t, ok := l.Begin()
			if !ok {
				h.refused.Add(1)
				break
			}
			h.held = append(h.held, t)
			h.begun.Add(1)
		}
		<-h.wake
	}
}

func (h *heldLoop) Close() { h.closed.Add(1) }

// Governed on a fake clock, a loop host's iterations follow the offer as
// goroutine workers do: the slots made are the workers the offer reached
// (never past the ceiling, split over the loops), the iterations in flight
// never exceed the offer, and at the stop every iteration begun is ended,
// no new one begins and every loop is closed.
func TestLoopsFollowTheOffer(t *testing.T) {
	clk := &stepClock{Fake: clock.NewFake(time.Unix(1_000_000, 0)), tickers: map[*stepTicker]bool{}}
	const tick = 100 * time.Millisecond
	l := governor.NewLimits(governor.Concurrency, 10)
	l.Window, l.MinAttempts, l.Start = 500*time.Millisecond, 1, 1
	var begun, refused, ended, closed atomic.Int64
	var loops []*heldLoop
	var mu sync.Mutex
	p, err := New(Config{
		Limits: l, Governed: true, Duration: 6 * time.Second, Grace: -1, Loops: 3,
		Tick: tick, Clock: clk, Counters: &cleanCounters{}, Watch: WatchConfig{CPU: -1},
		Governor: []governor.Option{governor.WithEarlyBreach(false), governor.WithEvidence(governor.EvidenceNone)},
		NewLoop: func(int) (Loop, error) {
			h := &heldLoop{wake: make(chan struct{}, 1), begun: &begun, refused: &refused, ended: &ended, closed: &closed}
			mu.Lock()
			loops = append(loops, h)
			mu.Unlock()
			return h, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	wait := runStarted(t, p)
	testwait.Until(t, 10*time.Second, "the governor's ticker", func() bool { return clk.has(tick) })
	var peakOffer float64
	for at := time.Duration(0); at < 6*time.Second; at += tick / 2 {
		clk.step(t, tick/2)
		st := p.Status()
		if float64(st.InFlight) > st.Offer {
			t.Errorf("at %v %d iterations in flight above the offer %v", at, st.InFlight, st.Offer)
		}
		if st.Workers > 10 {
			t.Errorf("at %v %d workers, above the ceiling", at, st.Workers)
		}
		peakOffer = max(peakOffer, st.Offer)
	}
	testwait.Until(t, 10*time.Second, "the slots to reach the offer", func() bool { return p.Status().Workers == 10 })
	clk.Advance(time.Second)
	res := wait()
	if peakOffer != 10 {
		t.Errorf("the offer peaked at %v: a clean target lets the governor climb to 10", peakOffer)
	}
	if res.Workers != 10 || len(loops) != 3 || closed.Load() != 3 {
		t.Errorf("%d workers on %d loops (%d closed), want 10 on 3, all closed", res.Workers, len(loops), closed.Load())
	}
	if begun.Load() != 10 || ended.Load() != 10 || p.Status().InFlight != 0 {
		t.Errorf("%d begun, %d ended, %d in flight: want 10, 10, 0", begun.Load(), ended.Load(), p.Status().InFlight)
	}
	for _, h := range loops {
		if h.badState.Load() {
			t.Error("a stopping phase let an iteration begin")
		}
	}
}

// A loop host runs no fixed iterations and no ramp-down grace.
func TestLoopsRefused(t *testing.T) {
	nl := func(int) (Loop, error) { return nil, nil }
	for name, cfg := range map[string]Config{
		"iterations": {Limits: governor.NewLimits(governor.Concurrency, 2), Counters: &cleanCounters{}, NewLoop: nl, Iterations: &Iterations{Count: 1, Workers: 1}},
		"ramp-down":  {Limits: governor.NewLimits(governor.Concurrency, 2), Counters: &cleanCounters{}, NewLoop: nl, RampDownGrace: time.Second},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// doneLoop returns from Run at once.
type doneLoop struct{}

func (doneLoop) Run(*Lane) {}
func (doneLoop) Close()    {}

// Workers the governor adds to a loop host start spread over one
// closed-loop cycle, as goroutine workers do: Lane.Due of each new slot,
// worker g on loop g mod Loops.
func TestLoopsStagger(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	p, err := New(Config{Limits: governor.NewLimits(governor.Concurrency, 10), Loops: 2, Clock: clk, Counters: &cleanCounters{},
		NewLoop: func(int) (Loop, error) { return doneLoop{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	p.spawnTo(context.Background(), 2, true) // no iteration ended yet: at once
	p.iterNanos.Store(int64(40 * time.Millisecond))
	p.iterCount.Store(1) // a 40 ms cycle
	clk.Advance(time.Second)
	p.spawnTo(context.Background(), 6, true) // four more over 40 ms
	p.wg.Wait()
	now := clk.Now()
	want := []time.Duration{-time.Second, -time.Second, 0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
	for g, w := range want {
		lane := p.lanes[g%2]
		if got := lane.Due(g / 2).Sub(now); got != w {
			t.Errorf("worker %d (loop %d slot %d) due at %v, want %v", g, g%2, g/2, got, w)
		}
	}
	if lw := []int{p.lanes[0].Want(), p.lanes[1].Want()}; lw[0] != 3 || lw[1] != 3 {
		t.Errorf("the loops want %v slots, want 3 each", lw)
	}
}

// openLoop is an open-loop loop host: it begins every arrival handed to
// it on a slot and ends it at once, or (hold) keeps it until the phase
// stops, so arrivals past the slots made are dropped. It waits for the
// phase's wake as an epoll loop waits for its eventfd.
type openLoop struct {
	hold          bool
	neverWaits    bool // it polls for arrivals without saying it waits (Sleeping): a loop that is never idle
	began, noSlot *atomic.Uint64
	slots, busy   int
	held          []Ticket
	wake          chan struct{}
}

func (o *openLoop) Run(l *Lane) {
	o.wake = make(chan struct{}, 1)
	l.OnWake(func() {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	})
	for {
		dues := l.Take()
		if n := l.Want() - o.slots; n > 0 {
			o.slots += n
			l.Grew(n)
		}
		for _, due := range dues {
			if o.busy == o.slots {
				o.noSlot.Add(1) // the phase handed an arrival with no slot for it
				continue
			}
			t, ok := l.BeginDue(due)
			if !ok {
				continue
			}
			o.began.Add(1)
			if o.hold {
				o.busy++
				o.held = append(o.held, t)
				continue
			}
			l.End(t)
			l.Free()
		}
		select {
		case <-l.Stopping():
			if l.Pending() {
				continue // dropped by BeginDue on the next pass
			}
			for _, t := range o.held {
				l.End(t)
			}
			return
		default:
		}
		if o.neverWaits {
			select {
			case <-time.After(time.Millisecond):
			case <-l.Stopping():
			}
			continue
		}
		l.Sleeping(true)
		if !l.Pending() {
			select {
			case <-o.wake:
			case <-l.Stopping():
			}
		}
		l.Sleeping(false)
	}
}

func (o *openLoop) Close() {}

// An open loop on a loop host runs the schedule as goroutine workers do:
// every arrival is begun on a free slot or dropped (no slot free and the
// pool at MaxWorkers), the missed ones are counted, and arrivals + missed
// is the schedule's 60 (40/s for 1.5 s) exactly; no arrival is handed to a
// loop without a slot for it.
func TestLoopsOpenLoop(t *testing.T) {
	for _, hold := range []bool{false, true} {
		c := &cleanCounters{}
		var began, noSlot atomic.Uint64
		p, err := New(Config{Limits: governor.NewLimits(governor.Rate, 40), Duration: 1500 * time.Millisecond, MaxWorkers: 3, Loops: 2,
			Counters: c, NewLoop: func(int) (Loop, error) { return &openLoop{hold: hold, began: &began, noSlot: &noSlot}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Arrivals+res.Missed != 60 || began.Load()+c.dropped.Load() != res.Arrivals || c.missed.Load() != res.Missed || noSlot.Load() != 0 {
			t.Errorf("hold %v: %d arrivals (%d began, %d dropped) + %d missed (counters %d), %d without a slot: want 60, all accounted for",
				hold, res.Arrivals, began.Load(), c.dropped.Load(), res.Missed, c.missed.Load(), noSlot.Load())
		}
		if hold && (began.Load() != 3 || res.Workers != 3) {
			t.Errorf("held iterations: %d began on %d workers, want the 3 slots MaxWorkers allows", began.Load(), res.Workers)
		}
		if !hold && (res.Workers > 3 || c.lagN.Load() != began.Load()) {
			t.Errorf("%d workers (MaxWorkers 3), %d lags for %d begun", res.Workers, c.lagN.Load(), began.Load())
		}
	}
}

// The generator's watch on a loop host: arrivals dropped because every
// slot is taken are the generator's saturation when the loop never waits
// (its slots are held by its own work) and not when it waits for the
// target (held iterations are a slow target's answers, and the loop
// sleeps): the same drops, judged by where the loop's time went.
func TestLoopsWatchDrops(t *testing.T) {
	for _, never := range []bool{false, true} {
		c := &cleanCounters{}
		var began, noSlot atomic.Uint64
		p, err := New(Config{Limits: governor.NewLimits(governor.Rate, 200), Duration: 1500 * time.Millisecond, MaxWorkers: 3, Loops: 1,
			// The drop rule alone, the others have their own tests: the
			// wait rule reads the whole test process's goroutines, and on
			// a loaded machine they may wait to run whatever this loop does.
			Counters: c, Watch: WatchConfig{CPU: -1, Lag: -1, Shortfall: -1, Wait: -1, Read: -1},
			NewLoop: func(int) (Loop, error) {
				return &openLoop{hold: true, neverWaits: never, began: &began, noSlot: &noSlot}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.dropped.Load() == 0 || began.Load() != 3 {
			t.Fatalf("never waits %v: %d began, %d dropped: want 3 held and the rest dropped", never, began.Load(), c.dropped.Load())
		}
		g := res.Generator
		switch {
		case never && (g.SaturatedTicks == 0 || g.Signals["drop"] != g.SaturatedTicks):
			t.Errorf("a loop that never waits, dropping arrivals: %+v, want saturated ticks, all by the drop rule", g)
		case !never && g.SaturatedTicks != 0:
			t.Errorf("a loop waiting for a slow target's answers: %+v, want no saturated tick", g)
		}
	}
}
