package phase

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// probes enforces the governor's outage hold (governor/outage.go): while
// the governor judges the target out, the committed offer holds, but only
// governor.OutageProbes iterations start per tick — enough to see the
// target come back — instead of the whole held offer beating on an address
// that refuses it (a closed loop of refused connections spins at tens of
// thousands a second). The arrivals held back are not arrivals: neither
// started nor dropped, as if the offer were that low. When the probes are
// answered the governor ends the outage and the held offer runs at once.
type probes struct {
	on   atomic.Bool // out, read without the lock on every arrival
	out  bool        // the governor's outage, as of its last window
	from time.Time   // the current tick's start
	used int         // probes started in it
	mu   sync.Mutex
}

// setOutage follows the governor's outage state; the phase's observer calls
// it with each closed window (the governor enters and ends an outage only
// at a window's close).
func (p *Phase) setOutage() {
	if p.gov == nil || !p.cfg.Governed {
		return
	}
	out := p.gov.State().Outage
	p.probe.mu.Lock()
	if out && !p.probe.out {
		p.probe.from, p.probe.used = time.Time{}, 0
	}
	p.probe.out = out
	p.probe.on.Store(out)
	p.probe.mu.Unlock()
}

// admit reports whether an iteration may start now, and else when the next
// tick begins: always outside an outage; during one, while the tick's
// probes are not used up.
func (p *Phase) admit() (bool, time.Time) {
	pr := &p.probe
	if !pr.on.Load() {
		return true, time.Time{}
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.out {
		return true, time.Time{}
	}
	now := p.clk.Now()
	if pr.from.IsZero() || now.Sub(pr.from) >= p.cfg.Tick {
		pr.from, pr.used = now, 0
	}
	if pr.used < governor.OutageProbes {
		pr.used++
		return true, time.Time{}
	}
	return false, pr.from.Add(p.cfg.Tick)
}

// waitProbe holds a closed-loop worker until an iteration may start: at
// once outside an outage, else at the next tick with a probe left. It
// returns false when ctx ends first.
func (p *Phase) waitProbe(ctx context.Context) bool {
	for {
		ok, next := p.admit()
		if ok {
			return true
		}
		t := p.clk.NewTimer(next.Sub(p.clk.Now()))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
	}
}
