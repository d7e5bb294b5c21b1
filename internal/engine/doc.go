// Package engine is throttle's HTTP load engine: one governed load phase
// against a set of HTTP targets, measured honestly.
//
// A phase joins three parts. The gate (package gate) admits iterations at
// the offer; the governor (package governor) reads the engine's cumulative
// attempt counters every tick, judges each window's attempt-failure fraction
// and moves the offer through the control path; the engine sends the
// requests and counts what became of them.
//
// # Modes
//
// Open-loop rate mode: a scheduler takes each admission from the rate gate
// (Permit.Due is the arrival's intended start) and hands it to an idle
// worker of a bounded pool (Config.MaxVUs), starting workers lazily. An
// arrival that finds every worker busy is dropped and counted, never
// silently skipped. Latency is measured from the intended start, so a
// target that slows down cannot slow the measurement with it (no coordinated
// omission).
//
// Closed-loop concurrency mode: workers iterate back to back, each iteration
// holding a permit of the concurrency gate, so at most the offer are in
// flight. Workers are started as the offer first reaches them (never more
// than the ceiling); when the offer falls the extra workers wait at the gate.
//
// # Attempts and iterations
//
// An iteration makes up to Config.Tries attempts, pausing a small jittered,
// capped, exponential backoff between them. Every attempt counts once into
// the attempt plane (ok or failed, the governor's evidence) and into one
// outcome Class; FailOn says which classes and statuses fail. Iterations are
// counted by their final outcome too, so the report can put "ok % after
// tries" beside the attempt-failure % that retries hide. Targets are sent
// round-robin.
//
// # Stopping
//
// A phase ends when its duration passes or Run's context ends (Ctrl-C): the
// governor stops, no new arrival is admitted and no new try is started, the
// in-flight iterations get the grace period to finish and are then aborted
// (Abort cuts the grace short). Aborted attempts are counted apart: they are
// the engine's doing, not the target's. Run returns the full Result either
// way.
//
// # Cost
//
// The hot path takes no lock of the engine's (the latency recorder and the
// concurrency gate have their own) and allocates nothing net/http does not:
// counters are padded atomics; each worker keeps its targets' prepared
// requests and one attempt deadline (a context and a timer re-armed per
// attempt, replaced only after a timeout); the HTTP transport keeps an idle
// connection per worker so connections are reused; every response body is
// drained and closed.
package engine
