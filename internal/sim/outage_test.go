package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// downFor is a shedding target (capacity c) that is out from down to up:
// every attempt then fails, unreachable (refused) when refused is true,
// answered with a 503 otherwise.
type downFor struct {
	shed        Target
	down, up    time.Duration
	refused     bool
	unreachable float64
}

func (d *downFor) Serve(at time.Duration, x float64, step time.Duration, rng *rand.Rand) (float64, float64) {
	if at >= d.down && at < d.up {
		if d.refused {
			d.unreachable += x * step.Seconds()
		}
		return 0, x * step.Seconds()
	}
	return d.shed.Serve(at, x, step, rng)
}

func (d *downFor) Load() governor.Load {
	return governor.Load{Unreachable: uint64(math.Floor(d.unreachable))}
}

// The issue-24 experiment in the simulator: a target shedding above 300/s
// refuses every connection for 10 s. The outage holds the offer and
// last_bad (a back-off its first refusals caused before the outage was
// plain is undone); within three windows of the target's return the offer is back
// within 10 % of where it was. The same 10 s of 503s is congestion: it backs
// off and sets last_bad.
func TestOutageIsNotCongestion(t *testing.T) {
	const c = 300.0
	down, up := 90*time.Second, 100*time.Second
	for _, refused := range []bool{true, false} {
		g := NewGovernor(Setting())
		target := &downFor{shed: Shed(c), down: down, up: up, refused: refused}
		r, err := Run(g, target, For(150*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var before, after, prev governor.Window
		var outages, backoffsInside, undone int
		afterN := 0
		for _, w := range r.Windows {
			if w.Decision.Signal == governor.SignalOutage && prev.Decision.Signal == governor.SignalBackoff && w.Decision.Offer == prev.Offer {
				undone++ // the outage's first refusals, read as congestion, undone
			}
			prev = w
			start := w.Start.Sub(Epoch)
			end := w.End.Sub(Epoch)
			switch {
			case end <= down:
				before = w
			case w.Decision.Signal == governor.SignalOutage:
				outages++
			case start < up && w.Decision.Kind == governor.KindLower:
				backoffsInside++
			case start >= up && afterN < 3:
				afterN++
				after = w
			}
		}
		if !refused {
			if outages != 0 || backoffsInside == 0 {
				t.Errorf("503s: %d outage windows, %d back-offs while failing: want congestion (back-offs), no outage", outages, backoffsInside)
			}
			continue
		}
		if outages == 0 || backoffsInside != undone {
			t.Errorf("refused: %d outage windows, %d back-offs while out, %d undone: want an outage and every back-off undone", outages, backoffsInside, undone)
		}
		if after.Offer < 0.9*before.Offer || after.Decision.LastBad != before.Decision.LastBad {
			t.Errorf("refused: before the outage offer %.1f last_bad %.1f; third window after it offer %.1f last_bad %.1f",
				before.Offer, before.Decision.LastBad, after.Offer, after.Decision.LastBad)
		}
	}
}
