//go:build linux

package phase

import (
	"os"
	"strconv"
)

// threadDemand is the time thread tid of this process has run or waited
// to run (schedstat: on a CPU plus on a run queue) so far; false when the
// kernel does not say.
func threadDemand(tid int) (int64, bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	return parseSchedstat(b)
}
