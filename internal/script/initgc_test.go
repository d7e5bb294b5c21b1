package script

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// gcSettings reads GOGC and the memory limit without changing them.
func gcSettings() (percent int64, limit int64) {
	s := []rtmetrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// A bulk of VUs being made holds the GC off under a memory limit no
// higher than the bound; once made, the heap may grow by a quarter before the
// first cycle, whose end restores GOGC and the limit as they were. Fewer
// VUs than a bulk change nothing.
func TestGCHeldWhileVUsAreMadeInBulk(t *testing.T) {
	if userTunedGC {
		t.Fatal("GOGC or GOMEMLIMIT is set: the hold is off by design; run the tests without them")
	}
	const userLimit = 64 << 40
	prevLimit := debug.SetMemoryLimit(userLimit)
	prevPercent := debug.SetGCPercent(80)
	defer func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}()
	var h gcHold
	for range bulkVUs - 1 {
		h.enter(1<<40, 1)
	}
	if p, l := gcSettings(); p != 80 || l != userLimit {
		t.Fatalf("%d VUs being made changed the GC: GOGC %d, limit %d", bulkVUs-1, p, l)
	}
	bound := processMemory() + 512<<20
	h.enter(bound, 1)
	p, l := gcSettings()
	if p != -1 {
		t.Fatalf("a bulk: GOGC %d, want off", p)
	}
	if l > bound {
		t.Fatalf("a bulk: memory limit %d above the bound %d", l, bound)
	}
	for range bulkVUs - 1 {
		h.leave()
	}
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("the bulk still being made: GOGC back to %d", p)
	}
	h.leave()
	p, l = gcSettings()
	if p != -1 {
		t.Fatalf("the bulk made: GOGC back to %d before any GC cycle", p)
	}
	if held := processMemory(); l > held/4*5+1<<20 || l < held {
		t.Fatalf("after the bulk: memory limit %d, want about 1.25x the %d held", l, held)
	}
	testwait.Until(t, testwait.Deadline, "GOGC and the limit restored after a GC cycle", func() bool {
		runtime.GC()
		p, l := gcSettings()
		return p == 80 && l == userLimit
	})
}

// Local agents share one machine's memory: with no bound given, each of N
// holds its GC under its share of the machine's memory and of what is
// available, so N agents making VUs at once cannot take more than all of it.
func TestGCHoldShare(t *testing.T) {
	if userTunedGC {
		t.Fatal("GOGC or GOMEMLIMIT is set: the hold is off by design; run the tests without them")
	}
	machine, avail := MachineMemory(), availableMemory()
	if machine <= 0 || avail <= 0 {
		t.Fatalf("this machine's memory unknown (total %d, available %d): the share cannot be checked", machine, avail)
	}
	prevLimit := debug.SetMemoryLimit(1 << 62)
	prevPercent := debug.SetGCPercent(100)
	defer func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}()
	const share = 4
	var h gcHold
	for range bulkVUs {
		h.enter(0, share)
	}
	_, l := gcSettings()
	held := processMemory()
	for range bulkVUs {
		h.leave()
	}
	h.mu.Lock()
	h.restore()
	h.mu.Unlock()
	if want := machine / 10 * 9 / share; l > want {
		t.Errorf("one of %d agents: memory limit %d, above its share %d of 90 %% of the machine", share, l, want)
	}
	// Available memory moves while the test runs: allow it a margin.
	if want := held + (avail+avail/10)/10*8/share; l > want {
		t.Errorf("one of %d agents: memory limit %d, above what it holds (%d) and its share of the available %d", share, l, held, avail)
	}
}
