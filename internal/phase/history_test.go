package phase

import (
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// A phase holds its newest KeepWindows windows and sums up the older ones:
// memory stays bounded however long it runs, the count, the saturated
// windows and the outage intervals of the whole run survive.
func TestPhaseForgetsOldWindows(t *testing.T) {
	p := &Phase{cfg: Config{Limits: governor.NewLimits(governor.Rate, 100)}}
	t0 := time.Unix(0, 0)
	n := 3*KeepWindows + 7
	for i := range n {
		w := governor.Window{Start: t0.Add(time.Duration(i) * time.Second), End: t0.Add(time.Duration(i+1) * time.Second), Offer: 50, OK: 100}
		switch {
		case i%1000 == 1: // saturated
			w.Failed, w.Frac = 100, 0.5
		case i%1000 == 5, i%1000 == 6: // a two-window outage
			w.OK, w.Failed, w.Frac = 0, 20, 1
			w.Decision.Signal = governor.SignalOutage
		}
		p.observe(w)
		if len(p.windows) >= KeepWindows+KeepWindows/4 {
			t.Fatalf("%d windows held after %d closed", len(p.windows), i+1)
		}
	}
	ws, e := p.Windows(), p.Earlier()
	if e.Windows+len(ws) != n || ws[len(ws)-1].Start != t0.Add(time.Duration(n-1)*time.Second) || e.First.Start != t0 {
		t.Errorf("%d held + %d earlier (first at %v): want %d in all, the newest held", len(ws), e.Windows, e.First.Start, n)
	}
	if e.Windows/1000 != len(e.Outages) || e.Saturated != len(e.Outages) {
		t.Errorf("earlier: %d windows, %d saturated, %d outages: want one saturated window and one outage each 1000", e.Windows, e.Saturated, len(e.Outages))
	}
	if o := e.Outages[0]; o.Start != t0.Add(5*time.Second) || o.End != t0.Add(7*time.Second) {
		t.Errorf("first outage %v–%v: want 5–7 s, its two windows merged", o.Start, o.End)
	}
}
