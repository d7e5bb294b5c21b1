package session

import (
	"os"
	"strings"

	"github.com/throttlekit/throttle/internal/script"
)

// MemoryEnv is script.MemoryEnv: the run's memory bound.
const MemoryEnv = script.MemoryEnv

// MemoryLimit reads MemoryEnv, or makes the default (90 % of the memory the
// process may use); 0: no bound (set to 0, or the machine's memory
// unknown). A bad value is bad input, refused before anything runs: by a
// one-machine run, by `throttle agent` (whose bound it is, shared by the N
// local agents of a controller) and by a controller that starts local
// agents.
func MemoryLimit() (int64, error) {
	if v := strings.TrimSpace(os.Getenv(MemoryEnv)); v == "0" {
		return 0, nil
	}
	n, err := sizeEnv(MemoryEnv)
	if err != nil || n > 0 {
		return n, err
	}
	return script.MachineMemory() / 10 * 9, nil
}

// runMemory is a one-machine run's guard of its bound limit.
func runMemory(limit int64) script.MemoryGuard {
	return script.MemoryGuard{Limit: limit, Note: script.MemoryNote(), Stops: "the run"}
}
