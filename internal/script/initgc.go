package script

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// The Go GC is held off while VUs are made in bulk.
//
// A constant-vus scenario of 100 000 VUs makes them all at its start: the
// heap grows from nothing to gigabytes, and at GOGC=100 the GC marks it
// again at each doubling — the whole growing heap, sobek's object graphs
// (hundreds of objects per VU) — so that marking, not the init contexts,
// was most of the CPU of making the VUs (a cycle of 6-11 s of CPU at
// 100 000). Little of what an init context allocates is garbage (a VU
// keeps about 37 of the 48 KB it allocates), so collecting during the
// bulk frees little.
//
// So while at least bulkVUs VUs are being made at once, the GC is off
// (GOGC=off) under a soft memory limit (debug.SetMemoryLimit) of the
// run's memory bound (Config.MemoryBound: THROTTLE_MEMORY, else 90 % of
// the process's memory) or of what the machine has available, whichever
// is less: if the heap nears it, the GC runs anyway, so holding it off
// never takes the process past its bound. When the bulk is made, the
// limit becomes 1.25x what the process holds then, still with the GC off:
// the first cycle after the bulk comes as the heap grows by a quarter, as
// GOGC=25 would pace it, not at once with every VU's iterations assisting
// a GC already late (the GOGC=100 goal is still the pre-bulk heap's).
// That cycle's end restores GOGC and the memory limit as they were. (A
// runtime.GC at the bulk's end instead was measured and dropped: the
// count of VUs being made dips to 0 inside a scenario's start, and each
// dip then marked the whole heap mid-bulk: 18 000 VUs took 17 s, not 2.)
// Nothing is held when the user tuned the GC (GOGC or GOMEMLIMIT set).
type gcHold struct {
	mu      sync.Mutex
	making  int  // VUs being made now
	held    bool // the GC is off: in a bulk or after one, until a cycle ends
	percent int  // GOGC before the hold
	limit   int64
	gen     int // the hold's generation: a stale cycle's cleanup does nothing
}

// bulkVUs is how many VUs being made at once are a bulk: more than the
// init slots (a scenario's start, not a ramp's one VU at a time).
const bulkVUs = 64

var initGC gcHold

// userTunedGC: the user set the GC's own knobs; they are left alone.
var userTunedGC = os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""

// enter counts a VU being made; the bulkVUs-th at once holds the GC off
// with bound (bytes; <= 0: 90 % of MachineMemory over share) as its memory
// limit, and never past this process's share of the memory available
// (share: the processes sharing the machine, Config.MemoryShare).
func (h *gcHold) enter(bound int64, share int) { h.enterN(1, bound, share) }

// enterN counts n VUs about to be made at once (premade.go's bulk, which
// leaves one at a time), as n calls of enter would.
func (h *gcHold) enterN(n int, bound int64, share int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.making += n
	if h.making < bulkVUs || userTunedGC {
		return
	}
	share = max(share, 1)
	if bound <= 0 {
		bound = MachineMemory() / 10 * 9 / int64(share)
	}
	if bound <= 0 {
		return // nothing known to bound it by
	}
	if avail := availableMemory(); avail > 0 {
		bound = min(bound, processMemory()+avail/10*8/int64(share))
	}
	if !h.held {
		h.limit = debug.SetMemoryLimit(-1)
	}
	// The limit first: the GC is never off without one.
	debug.SetMemoryLimit(min(bound, h.limit))
	if !h.held {
		h.percent = debug.SetGCPercent(-1)
		h.held = true
	}
	h.gen++
}

// leave counts a VU made (or failed); the last of a bulk lets the heap
// grow by a quarter before the GC's first cycle, whose end restores it
// (1.25x: at 18 000 VUs the peak RSS was 87.5 KiB per VU against 97.9 at
// 1.5x, and that cycle's assists 1.6 s of CPU against 2.8 s).
func (h *gcHold) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.making--
	if h.making > 0 || !h.held {
		return
	}
	h.gen++
	held := processMemory()
	if held <= 0 { // unknown: no tail, the GC as it was
		h.restore()
		return
	}
	debug.SetMemoryLimit(min(held/4*5, debug.SetMemoryLimit(-1)))
	// A cleanup runs once a GC cycle found its object unreachable: the
	// end of the first cycle from now. Not a tiny allocation (those share
	// a block with others and may outlive it).
	s := &gcSentinel{}
	runtime.AddCleanup(s, h.cycled, h.gen)
}

// gcSentinel is large enough and has a pointer, so it is never a tiny
// allocation.
type gcSentinel struct {
	_ *int
	_ [3]uintptr
}

// cycled restores the GC after the first cycle past a bulk, unless a
// later bulk (a later generation) holds it again.
func (h *gcHold) cycled(gen int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held && gen == h.gen && h.making == 0 {
		h.restore()
	}
}

// restore sets GOGC and the memory limit back as they were before the
// hold (h.mu held).
func (h *gcHold) restore() {
	debug.SetGCPercent(h.percent)
	debug.SetMemoryLimit(h.limit)
	h.held = false
}

// processMemory is what the Go runtime holds from the OS now (what its
// memory limit counts).
func processMemory() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 || s[1].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// MachineMemory is the memory the process may use: its cgroup's (v2)
// limit when it has one, else the machine's MemTotal; 0 when neither is
// known.
func MachineMemory() int64 {
	if n, ok := readInt("/sys/fs/cgroup/memory.max"); ok && n > 0 {
		return n
	}
	return meminfo("MemTotal")
}

// availableMemory is what the process may still take: its cgroup's (v2)
// limit less what the cgroup uses, when it has a limit, else the
// machine's MemAvailable; 0 when neither is known.
func availableMemory() int64 {
	if limit, ok := readInt("/sys/fs/cgroup/memory.max"); ok {
		if cur, ok := readInt("/sys/fs/cgroup/memory.current"); ok {
			return max(limit-cur, 0)
		}
	}
	return meminfo("MemAvailable")
}

// meminfo is /proc/meminfo's line key in bytes; 0 when unknown.
func meminfo(key string) int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// readInt reads a file holding one integer ("max" is not one).
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
