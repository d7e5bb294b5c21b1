package script

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// The guard and the soft memory limit agree: with the GC's goal off, so
// that only the run's limit makes it collect, garbage many times the
// bound never trips the guard; live data past the bound does. When the
// user tuned the GC (here GOGC=off, no limit) the heap objects past the
// bound trip it, as the GC may never run.
func TestMemoryGuardAgreesWithLimit(t *testing.T) {
	if UserTunedGC() {
		t.Fatal("GOGC or GOMEMLIMIT is set: the run's limit is the user's by design; run the tests without them")
	}
	// A margin of 256 MiB over what the process holds now: the package's
	// earlier tests can leave work behind that grows the live heap a
	// little while this one runs (once 116 MiB under make stress, which
	// tripped a 64 MiB margin with no garbage involved).
	const margin = 256 << 20
	runtime.GC()
	bound := processMemory() + margin
	prevPercent := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prevPercent)
	var use memoryUse
	var sink []byte
	churn := func(until func() bool) bool { // garbage, 4x the bound at most
		for range 4 * bound >> 20 {
			sink = make([]byte, 1<<20)
			if until() {
				return true
			}
		}
		return false
	}
	unbind := BindMemory(bound, 1)
	if churn(func() bool { return use.overBound(bound, false) }) {
		unbind()
		o, k := use.read()
		t.Fatalf("garbage under the run's %d MiB limit tripped the guard: objects %d MiB, kept %d MiB, held %d MiB", bound>>20, o>>20, k>>20, processMemory()>>20)
	}
	kept := make([][]byte, bound>>20+1)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	over := use.overBound(bound, false)
	runtime.KeepAlive(kept)
	kept = nil
	unbind()
	if !over {
		t.Fatalf("%d MiB live past the %d MiB bound: the guard did not see it", bound>>20+1, bound>>20)
	}
	runtime.GC()
	bound = processMemory() + margin
	if !churn(func() bool { return use.overBound(bound, true) }) {
		t.Fatalf("garbage past %d MiB with the user's GC off and no limit: the guard never saw the heap pass it", bound>>20)
	}
	_ = sink
}
