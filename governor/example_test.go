package governor_test

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Embedding the governor around your own load loop. Here the "load loop" is
// a simulated target that serves 60 attempts per second and fails the rest
// (at 61.4/s one attempt in 61 fails: the dead band, so the offer holds);
// a real host counts its own attempts and calls Tick from a ticker (or just
// calls Run with a Control around its gate).
func ExampleGovernor_Tick() {
	var ok, failed uint64
	limits := governor.NewLimits(governor.Rate, 1000) // ceiling: 1000/s
	limits.Window = time.Second
	limits.MinAttempts = 1
	g, _ := governor.New(limits, governor.CountersFunc(func() (uint64, uint64) { return ok, failed }),
		governor.WithLogger(slog.New(slog.DiscardHandler)))

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	offer, _ := g.Tick(now) // the first tick asks for the start offer
	g.Confirm(now, governor.Confirmation{Origin: governor.OriginGovernor, Asked: offer, Applied: offer})
	for i := 0; i < 28; i++ { // each window: one settle tick, then one judged second
		// One second of load at the offer against a target of capacity 60/s.
		sent := uint64(offer)
		served := min(sent, 60)
		ok, failed = ok+served, failed+sent-served
		now = now.Add(time.Second)
		if next, move := g.Tick(now); move {
			fmt.Printf("%.1f → %.1f (%v)\n", offer, next, g.State().Last.Signal)
			offer = next
			g.Confirm(now, governor.Confirmation{Origin: governor.OriginGovernor, Asked: next, Applied: next})
		}
	}
	// Output:
	// 1.0 → 2.0 (slow-start)
	// 2.0 → 4.0 (slow-start)
	// 4.0 → 8.0 (slow-start)
	// 8.0 → 16.0 (slow-start)
	// 16.0 → 32.0 (slow-start)
	// 32.0 → 64.0 (slow-start)
	// 64.0 → 57.6 (back-off)
	// 57.6 → 58.9 (probe)
	// 58.9 → 60.2 (probe)
	// 60.2 → 61.4 (probe)
}
