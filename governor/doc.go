// Package governor is throttle's adaptive backpressure governor: it decides
// how much load a target gets, from the evidence of how the target is coping.
//
// A load test against a saturated target lies: retries absorb the server's
// rejections and ok % stays green. The governor looks through retries at the
// attempt plane: every try at the target resolves as ok or failed, a host
// counts them cumulatively (Counters), and the governor judges each window
// on the attempt-failure fraction frac = Δfailed / (Δok + Δfailed).
//
// # The rules
//
// Decide and MemoryClearStep (rules.go) are the seed's rules, pure:
//
//   - Slow start. The offer begins at Limits.Start (default: the floor) and
//     doubles every clean window (frac <= Low) while no congestion has been
//     seen. The authored value is the ceiling, not the opening offer.
//   - Severity-proportional back-off. frac > High multiplies the offer by
//     clamp(1 − frac, 0.25, 0.9), never below the floor, and remembers the
//     offer as last-bad.
//   - Dead band. Low < frac <= High holds.
//   - Congestion memory. With last-bad known, clean windows climb ×1.5 up to
//     0.75 × last-bad, then probe additively by max(1, 2 % of last-bad).
//     MemoryClearStreak consecutive clean windows at or above last-bad clear
//     the memory and restore the doubling.
//   - A rule that would cross the ceiling or floor holds there, naming it.
//
// In concurrency mode offers are whole numbers: increases round up,
// decreases round down.
//
// # The loop
//
// Governor does the bookkeeping around the rules. A window is judged only on
// evidence gathered entirely at the committed offer, at least
// Limits.MinAttempts resolved attempts over at least Limits.Window; a window
// still short at 4 × Window reports a no-evidence hold, which resets the
// memory streak but discards no evidence: the window goes on collecting, so
// even an offer of 1/s is judged once it has its attempts. Decisions travel on the
// push-on-set control path (Control): the governor's Set never blocks its
// loop, the Applier (a gate.Gate) applies the value and the Control confirms
// what was actually applied. The committed offer is the last confirmed value,
// and every confirmation restarts the window from a fresh counter snapshot
// once a settle span (WithSettle, one tick by default) has passed: answers
// arriving right after a change belong to the old offer. A write of another origin (OriginUser) is adopted the same way.
//
// Time is a parameter: Run drives the governor from a clock.Clock ticker, and
// Tick and Confirm take the time explicitly, so tests and simulations run
// exactly and fast.
//
// # Visible, never silent
//
// Every movement logs one line (log/slog, info) naming its signal; holds log
// at debug. Each closed window is handed to WithObserver as a Window record.
//
// # Measurement honesty
//
// Capacity turns the windows into the capacity at the failure bound: goodput
// over the steady windows (Steady: at or below High, judged near the
// congestion point, at the level the phase settled at). Windows above High
// are saturation artifacts, counted and excluded. Tally is the cumulative
// attempt counter a host feeds.
package governor
