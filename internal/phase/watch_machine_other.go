//go:build !linux

package phase

// openMachine: only Linux's /proc/stat is read; elsewhere the cpu rule of
// a colocated process judges its share alone (watch_machine.go).
func openMachine(int) (machineSource, string) { return nil, "no /proc/stat on this system" }
