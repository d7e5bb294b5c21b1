package governor

import "sync/atomic"

// Tally is a host's cumulative attempt counters: the evidence the governor
// reads. Count each resolved attempt once with Add; Attempts implements
// Counters. It is safe for concurrent use and its zero value is ready.
type Tally struct {
	ok, failed atomic.Uint64
}

// Add counts one resolved attempt, failed or ok.
func (t *Tally) Add(failed bool) {
	if failed {
		t.failed.Add(1)
	} else {
		t.ok.Add(1)
	}
}

// Attempts returns the cumulative counts.
func (t *Tally) Attempts() (ok, failed uint64) {
	// Read failed first: an attempt counted between the two loads then shows
	// up as an extra ok at worst, never as a failure its window did not see.
	failed = t.failed.Load()
	return t.ok.Load(), failed
}
