//go:build !unix

package phase

import "time"

// processCPU is unknown here: the watch judges lag and schedule alone.
func processCPU() time.Duration { return -1 }
