package script

import (
	"math"
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

// userLimit is the memory limit userGC sets, with GOGC 80: a user's
// settings, which a hold must put back.
const userLimit = 64 << 40

// userGC sets GOGC 80 and the memory limit userLimit for the test, and
// restores the process's own after it.
func userGC(t *testing.T) {
	t.Helper()
	if userTunedGC {
		t.Fatal("GOGC or GOMEMLIMIT is set: the hold is off by design; run the tests without them")
	}
	prevLimit := debug.SetMemoryLimit(userLimit)
	prevPercent := debug.SetGCPercent(80)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
}

// A bulk of VUs being made holds the GC off under a memory limit no
// higher than the bound; once made, the heap may grow by a quarter before the
// first cycle, whose end restores GOGC and the limit as they were. Fewer
// VUs than a bulk change nothing.
func TestGCHeldWhileVUsAreMadeInBulk(t *testing.T) {
	userGC(t)
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
	waitRestored(t, 80, userLimit)
}

// A bulk made before the start settles with one GC cycle; after it GOGC
// paces the next cycle to a goal of the live heap plus all the process
// holds, under the hold's limit, and that cycle's end restores GOGC and
// the limit as they were. While VUs are still being made, or with no bulk
// held, settle does nothing.
func TestGCSettledBeforeStart(t *testing.T) {
	userGC(t)
	var h gcHold
	h.settle()
	if p, l := gcSettings(); p != 80 || l != userLimit {
		t.Fatalf("no bulk held: settle changed the GC: GOGC %d, limit %d", p, l)
	}
	bound := processMemory() + 512<<20
	h.enterN(bulkVUs, bound, 1)
	for range bulkVUs - 1 {
		h.leave()
	}
	h.settle()
	if p, _ := gcSettings(); p != -1 {
		t.Fatalf("a VU still being made: settle restored GOGC to %d", p)
	}
	h.leave()
	before := gcCycles()
	h.settle()
	if n := gcCycles(); n == before {
		t.Fatal("the bulk made: settle returned without a GC cycle")
	}
	held, live := processMemory(), liveHeap()
	p, l := gcSettings()
	// held moves a little as the test runs: a few points' margin.
	if want := held * 100 / live; p < 80 || p < want-5 || p > want+5 {
		t.Fatalf("after settle: GOGC %d, want about %d (held %d over live %d)", p, want, held, live)
	}
	if l > bound {
		t.Fatalf("after settle: memory limit %d, above the hold's %d", l, bound)
	}
	waitRestored(t, 80, userLimit)
}

// settle's tail is never undone by the tail leave set before it: the
// cleanup of that tail, which the settling cycle runs, may run before
// settle sets its own, and then restores nothing.
func TestGCSettleOutlivesLeaveTail(t *testing.T) {
	userGC(t)
	var h gcHold
	h.enterN(bulkVUs, processMemory()+512<<20, 1)
	for range bulkVUs {
		h.leave()
	}
	h.mu.Lock()
	leaveGen := h.gen
	h.mu.Unlock()
	gen, ok := h.settling()
	if !ok {
		t.Fatal("a bulk held and made: settling refused")
	}
	h.cycled(leaveGen) // the leave tail's cleanup, run by the settling cycle
	runtime.GC()
	h.settled(gen)
	h.mu.Lock()
	held := h.held
	h.restore()
	h.mu.Unlock()
	if !held {
		t.Fatal("the leave tail's cleanup ran in settle and restored the GC before settle's tail")
	}
}

// GOGC after the settling cycle: the goal is the live heap plus what the
// process holds, and never nearer than the GOGC the hold restores.
func TestSettledPercent(t *testing.T) {
	for _, c := range []struct {
		percent    int
		held, live int64
		want       int
	}{
		{100, 240 << 20, 140 << 20, 171}, // 14 000 VUs settled
		{100, 140 << 20, 140 << 20, 100}, // all held is live: GOGC=100
		{300, 240 << 20, 140 << 20, 300}, // a higher GOGC is kept
		{100, 1 << 62, 1, math.MaxInt32},
	} {
		if got := settledPercent(c.percent, c.held, c.live); got != c.want {
			t.Errorf("settledPercent(%d, held %d, live %d) = %d, want %d", c.percent, c.held, c.live, got, c.want)
		}
	}
}

// A tail's limit is its share of what is held, and never above the
// hold's own limit (the run's bound, or what the machine has available).
func TestTailLimit(t *testing.T) {
	for _, c := range []struct {
		held, num, den, bound, want int64
	}{
		{400 << 20, 5, 4, 8 << 30, 500 << 20},
		{400 << 20, 2, 1, 8 << 30, 800 << 20},
		{400 << 20, 5, 4, 450 << 20, 450 << 20}, // the bound caps it
		{400 << 20, 5, 4, 300 << 20, 300 << 20}, // even below what is held: the GC runs
	} {
		if got := tailLimit(c.held, c.num, c.den, c.bound); got != c.want {
			t.Errorf("tailLimit(%d, %d/%d, bound %d) = %d, want %d", c.held, c.num, c.den, c.bound, got, c.want)
		}
	}
}

// settle's tail stays under the run's bound, and its end restores it.
func TestGCSettleUnderRunBound(t *testing.T) {
	setGC(t, 100, 64<<40)
	var h gcHold
	run := processMemory() + processMemory()/2
	unbind := h.bind(run)
	defer unbind()
	h.enterN(bulkVUs, 0, 1)
	for range bulkVUs {
		h.leave()
	}
	h.settle()
	if p, l := gcSettings(); p < 100 || l > run {
		t.Fatalf("after settle in a bound run: GOGC %d, limit %d; want GOGC >= 100 under the run's %d", p, l, run)
	}
	waitRestored(t, 100, run)
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

// The run's bound is the soft memory limit: as given, else 90 % of the
// machine's memory over the processes sharing it.
func TestRunMemoryLimit(t *testing.T) {
	machine := MachineMemory()
	if machine <= 0 {
		t.Fatal("this machine's memory unknown: the default cannot be checked")
	}
	for _, c := range []struct {
		bound int64
		share int
		want  int64
	}{
		{1 << 30, 1, 1 << 30},
		{1 << 30, 4, 1 << 30}, // a bound given is this process's own
		{0, 1, machine / 10 * 9},
		{-1, 0, machine / 10 * 9},
		{0, 4, machine / 10 * 9 / 4},
	} {
		if got := RunMemoryLimit(c.bound, c.share); got != c.want {
			t.Errorf("RunMemoryLimit(%d, %d) = %d, want %d", c.bound, c.share, got, c.want)
		}
	}
}

// A bound run holds the GC under its limit for the run and puts back the
// limit it found; a bulk of VUs made meanwhile restores to the run's
// limit, not to the one before the run; runs bound at once hold the least
// limit, and the last to end puts back the first's predecessor whatever
// the order they end in.
func TestBindMemory(t *testing.T) {
	const userLimit = 64 << 40
	setGC(t, 100, userLimit)
	var h gcHold
	run := processMemory() + 1<<30
	unbind := h.bind(RunMemoryLimit(run, 1))
	if p, l := gcSettings(); p != 100 || l != run {
		t.Fatalf("bound: GOGC %d, limit %d; want GOGC kept and limit %d", p, l, run)
	}
	for range bulkVUs {
		h.enter(0, 1)
	}
	if p, l := gcSettings(); p != -1 || l > run {
		t.Fatalf("a bulk in a bound run: GOGC %d, limit %d; want off under %d", p, l, run)
	}
	for range bulkVUs {
		h.leave()
	}
	waitRestored(t, 100, run)

	other := h.bind(run / 2)
	if _, l := gcSettings(); l != run/2 {
		t.Fatalf("two runs bound: limit %d, want the lesser %d", l, run/2)
	}
	other()
	other() // twice does nothing more
	if _, l := gcSettings(); l != run {
		t.Fatalf("the lesser run ended: limit %d, want the other's %d", l, run)
	}
	other = h.bind(run / 2)
	unbind()
	if _, l := gcSettings(); l != run/2 {
		t.Fatalf("the first run ended: limit %d, want the one still bound, %d", l, run/2)
	}
	other()
	if p, l := gcSettings(); p != 100 || l != userLimit {
		t.Fatalf("every run ended: GOGC %d, limit %d; want 100 and %d as before", p, l, userLimit)
	}
}

// A run bound while a hold is on takes effect when the hold ends.
func TestBindMemoryInHold(t *testing.T) {
	const userLimit = 64 << 40
	setGC(t, 100, userLimit)
	var h gcHold
	hold := processMemory() + 1<<30
	for range bulkVUs {
		h.enter(hold, 1)
	}
	unbind := h.bind(hold * 2)
	if p, l := gcSettings(); p != -1 || l > hold {
		t.Fatalf("bound in a hold: GOGC %d, limit %d; want the hold's (off, at most %d)", p, l, hold)
	}
	h.mu.Lock()
	h.restore()
	h.mu.Unlock()
	if p, l := gcSettings(); p != 100 || l != hold*2 {
		t.Fatalf("the hold ended: GOGC %d, limit %d; want 100 and the run's %d", p, l, hold*2)
	}
	unbind()
	if _, l := gcSettings(); l != userLimit {
		t.Fatalf("the run ended: limit %d, want %d as before", l, userLimit)
	}
}

// setGC sets GOGC and the memory limit for a test of binding, and puts
// them back after it.
func setGC(t *testing.T, percent int, limit int64) {
	t.Helper()
	if userTunedGC {
		t.Fatal("GOGC or GOMEMLIMIT is set: binding is off by design; run the tests without them")
	}
	prevLimit := debug.SetMemoryLimit(limit)
	prevPercent := debug.SetGCPercent(percent)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
}

// waitRestored runs GC cycles until GOGC is percent and the memory limit
// limit again: a hold's tail ends at a cycle's end, in a cleanup that runs
// after it.
func waitRestored(t *testing.T, percent, limit int64) {
	t.Helper()
	testwait.Until(t, testwait.Deadline, "GOGC and the limit restored after a GC cycle", func() bool {
		runtime.GC()
		p, l := gcSettings()
		return p == percent && l == limit
	})
}
