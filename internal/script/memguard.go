package script

import (
	"fmt"
	"os"
	rtmetrics "runtime/metrics"
	"sync/atomic"
	"time"
)

// MemoryEnv bounds the memory a script run may hold while its scenarios
// run (a size: bytes, or with KiB, MiB or GiB; 0 for no bound). Unset, the
// bound is 90 % of the memory the process may use (its cgroup's limit, else
// the machine's). It is the Go runtime's soft memory limit for the run (the
// GC works harder as the process nears it, and not at all more while memory
// is plentiful; not when the user set GOGC or GOMEMLIMIT), and a hard stop
// once the data the GC cannot free passes it (MemoryGuard): an iteration
// that allocates without end is stopped with one line and its report
// written, instead of the kernel killing the process and losing both. An
// agent reads its own; each of a controller's N local agents (which
// inherit its environment) takes an Nth.
const MemoryEnv = "THROTTLE_MEMORY"

// memoryWatch is how often the heap is looked at while a script runs.
const memoryWatch = 100 * time.Millisecond

// MemoryNote says where a run's bound came from and how to change it.
func MemoryNote() string {
	if os.Getenv(MemoryEnv) != "" {
		return MemoryEnv
	}
	return "90 % of the memory the process may use; " + MemoryEnv + " sets it"
}

// MemoryGuard is a run's memory bound as a hard stop: what the run keeps
// is watched, and the first time it is over Limit the run is stopped.
// The same limit is the Go runtime's soft memory limit for the run
// (BindMemory): near it the GC collects more often, so garbage never trips
// the guard; only data the GC cannot free does.
type MemoryGuard struct {
	Limit int64  // bytes; <= 0: never over
	Note  string // where Limit came from (MemoryNote, and any share of it)
	Stops string // what passing it stops: "the run", "the agent's segment"
}

// Passed says the bound was passed, naming it: the start of the guard's
// line and of the error its run ends with.
func (g MemoryGuard) Passed() string {
	return fmt.Sprintf("the heap passed %d MiB (%s)", g.Limit>>20, g.Note)
}

// Watch watches the memory the process keeps until done closes. The first
// time it is over the limit (see memoryUse.overBound), it says so in one
// line and calls stop (which stops the run and cuts off what is in
// flight); the flag it returns says it did.
func (g MemoryGuard) Watch(done <-chan struct{}, line func(string), stop func()) *atomic.Bool {
	var fired atomic.Bool
	if g.Limit <= 0 {
		return &fired
	}
	go func() {
		t := time.NewTicker(memoryWatch)
		defer t.Stop()
		var use memoryUse
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if !use.overBound(g.Limit, userTunedGC) {
				continue
			}
			fired.Store(true)
			line(fmt.Sprintf("%s: the script allocates without bound; %s is stopped and what is in flight cut off (live heap %d MiB, stacks and runtime metadata %d MiB)", g.Passed(), g.Stops, use.live>>20, use.beside>>20))
			stop()
			return
		}
	}()
	return &fired
}

// memoryUse reads what the guard compares with the run's bound.
type memoryUse struct {
	s            []rtmetrics.Sample
	live, beside int64 // as last read: the live heap; stacks and metadata
}

// The runtime/metrics names memoryUse reads, in its samples' order.
var memoryUseNames = [...]string{
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
}

// read returns the heap objects (live and dead not yet swept) and the
// run's live data: the live heap at the last cycle's end and what the
// runtime holds beside the heap (goroutine stacks, metadata). kept is what
// the soft memory limit counts (total less released) less the heap's
// garbage, free pages and the room between objects in its spans (dead
// objects' slots, which new objects fill): kept <= limit is the live data
// fitting under the limit. (With that room counted, 18 000 VUs at 64 KiB
// each were stopped while the GC could still hold them a tenth over the
// bound, docs/performance.md.)
func (u *memoryUse) read() (objects, kept int64) {
	if u.s == nil {
		u.s = make([]rtmetrics.Sample, len(memoryUseNames))
		for i, n := range memoryUseNames {
			u.s[i].Name = n
		}
	}
	rtmetrics.Read(u.s)
	var v [len(memoryUseNames)]int64
	for i := range u.s {
		if u.s[i].Value.Kind() != rtmetrics.KindUint64 {
			return 0, 0 // not known to this runtime: never over
		}
		v[i] = int64(u.s[i].Value.Uint64())
	}
	live, objects, total, released, free, unused := v[0], v[1], v[2], v[3], v[4], v[5]
	u.live, u.beside = live, max(total-released-free-objects-unused, 0)
	return objects, u.live + u.beside
}

// overBound says the run's data cannot be held under limit: what the GC
// cannot free is over it. When the runtime's limit is not the run's
// (userGC: the user set GOGC or GOMEMLIMIT), the GC may not run at all
// (GOGC=off), so the heap objects alone past limit are over it too. Not
// otherwise: the GC overshoots its soft limit by what is allocated while
// it marks, and that garbage is not the run's data.
func (u *memoryUse) overBound(limit int64, userGC bool) bool {
	objects, kept := u.read()
	return kept > limit || userGC && objects > limit
}
