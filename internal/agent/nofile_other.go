//go:build !unix

package agent

// FileLimit is unknown here: no warning is given.
func FileLimit() (soft, hard uint64, ok bool) { return 0, 0, false }
