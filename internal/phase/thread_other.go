//go:build !linux

package phase

// threadDemand: only Linux says (thread_linux.go).
func threadDemand(int) (int64, bool) { return 0, false }
