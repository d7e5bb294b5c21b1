// Package gate is the adaptive token gate: it admits the iterations of a load
// test at the offer the governor decided, on every iteration, exactly and
// cheaply.
//
// # Modes
//
// In Rate mode the offer is admissions per second. The gate keeps a schedule:
// the k-th admission since the schedule was last anchored is due at
// anchor + k/offer, computed from the anchor each time so that no rounding
// accumulates, from 0.1/s to well past 200 000/s. An admission is granted
// once its due time has come; Permit.Due reports that instant, so an
// open-loop host measures latency from the intended start and not from the
// moment it got round to sending (no coordinated omission).
//
// In Concurrency mode the offer is a number of iterations in flight: the gate
// admits while fewer than ⌊offer⌋ permits are unreleased. Lowering the offer
// never cancels running work; new admissions wait until enough permits are
// released. Raising it admits waiters at once.
//
// # Burst
//
// The schedule starts at the first admission (or at Begin): admission 0 is
// due then, nothing is owed before it. It may lag the clock by at most the
// burst window (DefaultBurst, 2 ms, or WithBurst). A caller that is late by
// less than the window, because its goroutine was scheduled late or a timer
// fired late, catches up on the admissions it missed, so the achieved rate
// stays at the offer even though timers are coarse. A caller that is later
// than that, or comes back after an idle period, finds the schedule
// restarted behind it: the admissions that came due more than the window
// before its call are missed, never granted, and those within the window
// (at least the newest one owed; at most 1 + ⌊offer × burst⌋) are granted
// at once, never a pile-up of everything the idle period would have
// earned. Each reports its own due instant (within the window before the
// call; the newest owed within 1/offer), so latency measured from it
// includes the lateness. The schedule keeps its instants through a restart: the next
// admission is due where it always was, within 1/offer of the call. With
// WithBurst(0) a late caller takes only the newest admission owed.
//
// # Missed admissions
//
// Missed counts the admissions a restart skipped (and those an offer
// change dropped from a lagging schedule): for an open-loop scheduler, the
// arrivals the generator fell too far behind to make. Behind(t) counts the
// admissions due by t that nobody has taken yet. Together they close the
// account of the schedule exactly: at every instant t, Admitted + Missed +
// Behind(t) is the number of admissions the schedule made due up to t —
// at a constant offer from a start s, ⌊(t − s) × offer⌋ + 1 — so a host
// that stops at t can say what became of every one.
//
// # Changing the offer
//
// Apply (the governor's writes) and SetCeiling (a user changing the authored
// value mid-run) take effect at once. In rate mode the part of the current
// interval already waited is kept in proportion: when the rate rises, the
// next admission comes within one interval at the new rate and no saved-up
// tokens are multiplied into a burst; when it falls, the next admission comes
// no later than one interval at the new rate, never a stall of one interval
// at the old one.
//
// # Fairness
//
// Waiters are served first come, first served in both modes. A new arrival
// never overtakes a waiter: Acquire queues behind it and TryAcquire fails
// while anyone waits, so no waiter starves under a steady stream of new
// arrivals. Only the waiter at the head of the queue holds a timer (in rate
// mode; in concurrency mode nobody does); the others sleep until the gate
// hands them an admission. A waiter whose context ends leaves the queue
// without consuming anything.
//
// # The control path
//
// The governor does not reach into the gate: its control path calls
// Apply(offer) and expects back the value actually applied. Gate.Apply clamps
// the offer to [Floor, Ceiling] (and to a whole number in concurrency mode)
// and returns what it applied, so *Gate satisfies the governor's Applier and
// the governor's confirmed-apply sees the real value. The ceiling is the
// authored rate or concurrency: the gate never goes above it whatever it is
// told.
//
// # Cost
//
// An admission that does not wait takes the gate's mutex once (twice with a
// concurrency Release) and reads the clock once; it allocates nothing. A
// waiter allocates nothing in steady state either: waiters and their timers
// are reused (timers through clock.Resetter).
package gate
