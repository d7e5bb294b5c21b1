//go:build unix

package agent

import "syscall"

// FileLimit is this process's open-file limit in force (the soft
// RLIMIT_NOFILE; Go raised it to one below the hard limit at start) and the hard
// limit; ok false when the platform does not say.
func FileLimit() (soft, hard uint64, ok bool) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 0, 0, false
	}
	return uint64(l.Cur), uint64(l.Max), true
}
