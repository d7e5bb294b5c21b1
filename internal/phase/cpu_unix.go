//go:build unix

package phase

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used so far,
// or -1 when the platform does not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
