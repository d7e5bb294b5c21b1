// Package throttlevegeta governs a vegeta attack: the attack's rate follows
// throttle's governor, climbing while the target stays clean and backing off
// in proportion to the damage when it does not, with the authored rate as the
// ceiling.
//
// It is a nested module (github.com/throttlekit/throttle/adapters/vegeta) so
// that throttle's core module never depends on vegeta.
//
// # Pieces
//
// Pacer is a vegeta.Pacer whose rate is set from outside. It implements the
// governor's Applier, so governor.NewControl(pacer) is the control path from
// a governor to a running attack. Its doc states exactly how the schedule
// re-anchors when the rate changes mid-attack: no burst, no stall, never a
// negative or absurd wait.
//
// Counter turns vegeta results into the governor's cumulative attempt
// counters. A Classifier decides what a failed attempt is; DefaultClassifier
// fails what throttle's CLI fails: no response (transport error, timeout),
// 5xx and 429.
//
// Govern wires the three together and runs the governor on its own goroutine:
//
//	g, err := throttlevegeta.Govern(governor.NewLimits(governor.Rate, 2000))
//	if err != nil { ... }
//	defer g.Close()
//	for res := range g.Results(attacker.Attack(targeter, g.Pacer(), time.Minute, "governed")) {
//		metrics.Add(res)
//	}
//
// The governor's windows and movement lines are the governor package's own:
// pass governor options (a logger, a window observer, a clock) with
// WithGovernorOptions.
package throttlevegeta
