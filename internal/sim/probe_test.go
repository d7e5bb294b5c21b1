package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// probing is what a phase does to a target during an outage (internal/
// phase/probe.go): while the governor says the target is out, only
// governor.OutageProbes attempts go out per governor tick, whatever the
// held offer.
type probing struct {
	*downFor
	gov  *Governor
	tick time.Duration
	// sentOut counts the attempts sent while the governor said out.
	sentOut float64
}

func (p *probing) Serve(at time.Duration, x float64, step time.Duration, rng *rand.Rand) (float64, float64) {
	if p.gov.State().Outage {
		x = math.Min(x, governor.OutageProbes/p.tick.Seconds())
		p.sentOut += x * step.Seconds()
	}
	return p.downFor.Serve(at, x, step, rng)
}

// During an outage only a few probes a tick go out, not the held offer;
// they see the target's return at once, and the offer resumes where it was
// with last_bad untouched: within 10 % of the pre-outage offer within three
// windows of the return (the issue-24 bar), the outage over within one
// tick of it.
func TestOutageProbes(t *testing.T) {
	const c = 300.0
	down, up := 90*time.Second, 100*time.Second
	g := NewGovernor(Setting())
	target := &probing{downFor: &downFor{shed: Shed(c), down: down, up: up, refused: true}, gov: g, tick: governor.DefaultTickFor(Setting().Window)}
	r, err := Run(g, target, For(150*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var before, after governor.Window
	var firstOut, lastOut time.Duration
	afterN := 0
	for _, w := range r.Windows {
		start, end := w.Start.Sub(Epoch), w.End.Sub(Epoch)
		switch {
		case end <= down:
			before = w
		case w.Decision.Signal == governor.SignalOutage:
			if firstOut == 0 {
				firstOut = start
			}
			lastOut = end
		case start >= up && afterN < 3:
			afterN++
			after = w
		}
	}
	if firstOut == 0 {
		t.Fatal("no outage window")
	}
	// The probes: at most OutageProbes a tick while out, against the held
	// offer's ~300/s.
	outFor := (lastOut - firstOut).Seconds()
	if limit := governor.OutageProbes / target.tick.Seconds() * (outFor + 1); target.sentOut > limit || target.sentOut == 0 {
		t.Errorf("%.0f attempts sent over %.1f s out: want some, at most %.0f (%d a tick)", target.sentOut, outFor, limit, governor.OutageProbes)
	}
	if lastOut > up+target.tick {
		t.Errorf("the outage ended at %v: want within a tick of the target's return at %v", lastOut, up)
	}
	if after.Offer < 0.9*before.Offer || after.Decision.LastBad != before.Decision.LastBad || afterN < 3 {
		t.Errorf("before the outage offer %.1f last_bad %.1f; third window after it (%d seen) offer %.1f last_bad %.1f",
			before.Offer, before.Decision.LastBad, afterN, after.Offer, after.Decision.LastBad)
	}
	t.Logf("out %v–%v, %.0f probes; offer before %.1f, third window after %.1f (last_bad %.1f → %.1f)",
		firstOut, lastOut, target.sentOut, before.Offer, after.Offer, before.Decision.LastBad, after.Decision.LastBad)
}
