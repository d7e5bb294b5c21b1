package gate_test

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// The three rooms wired together around your own load loop: the host counts
// attempts (a governor.Tally), the governor decides, the Control carries the
// decision, the gate enforces it. Data flows one way: counters → governor →
// control → gate. Here the "target" fails everything above 40 admissions per
// second, and a fake clock stands in for time so the example runs at once.
// From second 10 on, 1 failure in 41 (2.4 %) is the dead band: the offer holds.
func Example() {
	limits := governor.NewLimits(governor.Rate, 1000) // the ceiling: 1000/s
	limits.Window, limits.MinAttempts, limits.Start = time.Second, 10, 10

	fc := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g, _ := gate.New(gate.Config{Mode: gate.Rate, Floor: limits.Floor, Ceiling: limits.Ceiling, Offer: limits.Start}, gate.WithClock(fc))
	var tally governor.Tally
	gov, _ := governor.New(limits, &tally, governor.WithSettle(0), governor.WithLogger(slog.New(slog.DiscardHandler)))
	ctl := governor.NewControl(g)
	defer ctl.Close()

	apply := func(now time.Time, ask float64) {
		ctl.Set(governor.OriginGovernor, ask)
		gov.Confirm(now, <-ctl.Confirmations()) // wait for the gate to confirm
	}
	if ask, ok := gov.Tick(fc.Now()); ok {
		apply(fc.Now(), ask)
	}
	for second := 0; second < 12; second++ {
		// One second of load: take every admission the gate grants.
		admitted := 0
		for step := 0; step < 1000; step++ {
			if _, ok := g.TryAcquire(); ok {
				admitted++
				tally.Add(admitted > 40) // the target serves 40 a second
			}
			fc.Advance(time.Millisecond)
		}
		if ask, ok := gov.Tick(fc.Now()); ok {
			apply(fc.Now(), ask)
			fmt.Printf("second %2d: admitted %3d, offer → %.1f (%v)\n", second+1, admitted, g.Offer(), gov.State().Last.Signal)
		}
	}
	// A host with a real clock calls gov.Run(ctx, ctl) instead of Tick and
	// Confirm, and its workers call g.Acquire(ctx).

	// Output:
	// second  1: admitted  10, offer → 20.0 (slow-start)
	// second  2: admitted  20, offer → 40.0 (slow-start)
	// second  3: admitted  40, offer → 80.0 (slow-start)
	// second  4: admitted  80, offer → 40.0 (back-off)
	// second  5: admitted  40, offer → 60.0 (safe-climb)
	// second  6: admitted  60, offer → 40.0 (back-off)
	// second  7: admitted  40, offer → 45.0 (safe-climb)
	// second  8: admitted  45, offer → 40.0 (back-off)
	// second  9: admitted  40, offer → 41.0 (probe)
}
