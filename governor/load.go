package governor

import "time"

// Load is a host's cumulative evidence beyond resolved attempts: what it
// started, what it could not start, how long resolved attempts took, and
// whether the host itself is the bottleneck right now. A governor whose
// Counters also implement LoadCounters reads it on every tick, beside
// Attempts, so that targets that queue (answer overload with latency, not
// errors) and generators that saturate can be told apart from a healthy
// target.
//
// All fields but GeneratorSaturated are cumulative and only grow. The zero
// value means "nothing beyond attempts is known".
type Load struct {
	// Started counts attempts sent to the target so far. In flight now is
	// Started − (ok + failed) of the same read; a host reads Started after
	// the attempt counters so that it is never below them.
	Started uint64
	// Dropped counts arrivals the schedule produced that no worker could
	// start (rate mode): load the target was offered but never served.
	Dropped uint64
	// Latency is the summed duration of every resolved attempt, ok or
	// failed; with the resolved count it gives a window's mean latency.
	Latency time.Duration
	// Unreachable counts failed attempts that found no server to answer
	// them: the connection refused, reset before any byte of an answer,
	// the host name unresolved, or the connect timed out (outage.go). A
	// status, even a 503, is an answer and never counts here.
	Unreachable uint64
	// GeneratorSaturated is the host's own verdict, at the moment of the
	// read, that it and not the target limits the load (schedule lag, CPU).
	GeneratorSaturated bool
}

// LoadCounters is Counters that also report Load. Hosts that know more than
// ok and failed attempts (the engine, the script runner) implement it.
type LoadCounters interface {
	Counters
	Load() Load
}
