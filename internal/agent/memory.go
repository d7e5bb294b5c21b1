package agent

import (
	"fmt"

	"github.com/throttlekit/throttle/internal/script"
)

// segmentMemory is the guard of a script agent's segment: the machine's
// bound memory (Config.Memory; 0: none) over the colocated agents sharing
// it (Spec.Colocated: a controller's N local agents inherit its
// THROTTLE_MEMORY, the bound of the whole run on that machine, so each
// takes an Nth, as each takes an Nth of the default; a remote agent,
// colocated 0, takes it whole).
func segmentMemory(memory int64, colocated int) script.MemoryGuard {
	g := script.MemoryGuard{Note: script.MemoryNote(), Stops: "the agent's segment"}
	if memory <= 0 {
		return g
	}
	share := max(colocated, 1)
	g.Limit = memory / int64(share)
	if share > 1 {
		g.Note = fmt.Sprintf("%s, shared by %d local agents", g.Note, share)
	}
	return g
}

// memoryError is the error a segment the guard stopped ends with: its
// final delta's, which the controller's run ends with, naming the agent.
func memoryError(g script.MemoryGuard, r *script.Runner) error {
	var aborted uint64
	for _, p := range r.Phases() {
		aborted += p.Counts().Aborted
	}
	return fmt.Errorf("%s: the script allocates without bound; its segment was stopped, %d attempt(s) aborted in flight", g.Passed(), aborted)
}
