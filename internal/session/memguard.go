package session

import (
	"fmt"
	"os"
	rtmetrics "runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// MemoryEnv bounds the memory a script run may hold while its scenarios
// run (a size: bytes, or with KiB, MiB or GiB; 0 for no bound). Unset, the
// bound is 90 % of the memory the process may use (its cgroup's limit, else
// the machine's). It is the Go runtime's soft memory limit for the run (the
// GC works harder as the process nears it, and not at all more while memory
// is plentiful; not when the user set GOGC or GOMEMLIMIT), and a hard stop
// once the data the GC cannot free passes it: an iteration that allocates
// without end is stopped with one line and its report written, instead of
// the kernel killing the process and losing both.
const MemoryEnv = "THROTTLE_MEMORY"

// memoryWatch is how often the heap is looked at while a script runs.
const memoryWatch = 100 * time.Millisecond

// memoryLimit reads MemoryEnv, or makes the default; 0: no bound (set to
// 0, or the machine's memory unknown).
func memoryLimit() (int64, error) {
	if v := strings.TrimSpace(os.Getenv(MemoryEnv)); v == "0" {
		return 0, nil
	}
	n, err := sizeEnv(MemoryEnv)
	if err != nil || n > 0 {
		return n, err
	}
	return script.MachineMemory() / 10 * 9, nil
}

// guardMemory watches the memory the run keeps until done closes. The
// first time it is over limit bytes (0: never; see overBound), it says so
// in one line and calls stop (the run's scenarios stop and what is in
// flight is cut off, each iteration named where it was); the flag it
// returns says it did.
//
// The same limit is the Go runtime's soft memory limit for the run
// (script.BindMemory): near it the GC collects more often, so garbage
// never trips the guard; only data the GC cannot free does.
func guardMemory(limit int64, done <-chan struct{}, line func(string), stop func()) *atomic.Bool {
	var fired atomic.Bool
	if limit <= 0 {
		return &fired
	}
	go func() {
		t := time.NewTicker(memoryWatch)
		defer t.Stop()
		var use memoryUse
		userGC := script.UserTunedGC()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if !use.overBound(limit, userGC) {
				continue
			}
			fired.Store(true)
			line(fmt.Sprintf("the heap passed %d MiB (%s): the script allocates without bound; the run is stopped and what is in flight cut off (live heap %d MiB, stacks and runtime metadata %d MiB)", limit>>20, memoryNote(), use.live>>20, use.beside>>20))
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

// memoryNote says where the bound came from and how to change it.
func memoryNote() string {
	if os.Getenv(MemoryEnv) != "" {
		return MemoryEnv
	}
	return "90 % of the memory the process may use; " + MemoryEnv + " sets it"
}
