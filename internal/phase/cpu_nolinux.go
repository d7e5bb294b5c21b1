//go:build !linux

package phase

import "time"

// machineCPU is unknown here: colocated processes judge their own CPU
// against their share of the cores (usableCores).
func machineCPU() (read func() time.Duration, cores int) { return nil, 0 }
