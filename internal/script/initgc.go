package script

import (
	"bufio"
	"cmp"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"slices"
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
// That cycle's end restores GOGC and the memory limit as they were (the
// run's bound, when BindMemory made it the limit for the run). (A
// runtime.GC at the bulk's end instead was measured and dropped: the
// count of VUs being made dips to 0 inside a scenario's start, and each
// dip then marked the whole heap mid-bulk: 18 000 VUs took 17 s, not 2.)
// The VUs a run makes before its scenarios start end their bulk
// differently: with one cycle at once, nothing iterating yet, and then a
// GOGC whose goal is the live heap plus all the process holds for the
// next cycle, so that the VUs' first iterations (their connects, stacks
// and first reads) grow the heap without a cycle at GOGC=100's goal
// (settle).
// Nothing is held when the user tuned the GC (GOGC or GOMEMLIMIT set).
type gcHold struct {
	mu      sync.Mutex
	making  int   // VUs being made now
	held    bool  // the GC is off: in a bulk or after one, until a cycle ends
	percent int   // GOGC before the hold
	limit   int64 // the limit before the hold, which it restores
	bound   int64 // the hold's own limit: the run's bound or what is available
	gen     int   // the hold's generation: a stale cycle's cleanup does nothing
	// paced: the hold's last step, settle's GOGC pace, is on (held, the
	// settling cycle run): GC turns may end it (turnsAllowed).
	paced bool

	runs    []*int64 // the run limits bound now (BindMemory), each its own
	unbound int64    // the limit before the first of them
}

// bulkVUs is how many VUs being made at once are a bulk: more than the
// init slots (a scenario's start, not a ramp's one VU at a time).
const bulkVUs = 64

var initGC gcHold

// userTunedGC: the user set the GC's own knobs; they are left alone.
var userTunedGC = os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""

// UserTunedGC says the user set GOGC or GOMEMLIMIT: the GC's limit and
// goal are theirs, neither held nor bound by a run.
func UserTunedGC() bool { return userTunedGC }

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
	if bound = RunMemoryLimit(bound, share); bound <= 0 {
		return // nothing known to bound it by
	}
	if avail := availableMemory(); avail > 0 {
		bound = min(bound, processMemory()+avail/10*8/int64(share))
	}
	if !h.held {
		h.limit = debug.SetMemoryLimit(-1)
	}
	// The limit first: the GC is never off without one.
	h.bound = min(bound, h.limit)
	debug.SetMemoryLimit(h.bound)
	h.paced = false
	if !h.held {
		h.percent = debug.SetGCPercent(-1)
		h.held = true
	}
	h.gen++
}

// RunMemoryLimit is the soft memory limit (debug.SetMemoryLimit) a run
// bound by bound bytes holds its process under: bound itself, or when
// bound <= 0, 90 % of MachineMemory over share (the processes sharing the
// machine, Config.MemoryShare); 0 when neither is known.
func RunMemoryLimit(bound int64, share int) int64 {
	if bound > 0 {
		return bound
	}
	return MachineMemory() / 10 * 9 / int64(max(share, 1))
}

// BindMemory makes the run's memory bound (as RunMemoryLimit reads bound
// and share) the Go runtime's soft memory limit until unbind is called:
// the GC keeps its goal (GOGC) while memory is plentiful and works harder
// only as the process nears the bound, instead of the heap doubling past
// it. A GC hold (a bulk of VUs being made) that is on or comes later
// restores to this limit, not to none. Nothing changes when the user
// tuned the GC (GOGC or GOMEMLIMIT set) or no bound is known. Runs bound
// at once in one process (in-process agents) hold the least of their
// limits; the last unbind puts back the limit before the first bind.
func BindMemory(bound int64, share int) (unbind func()) {
	return initGC.bind(RunMemoryLimit(bound, share))
}

// bind adds limit to the run limits bound now; the least of them is the
// memory limit the GC runs under outside a hold, and what a hold restores.
// The last unbind puts back the limit the first bind found, in whatever
// order the runs end (see BindMemory).
func (h *gcHold) bind(limit int64) (unbind func()) {
	if userTunedGC || limit <= 0 {
		return func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.runs) == 0 {
		h.unbound = h.inForce()
	}
	id := new(int64)
	*id = limit
	h.runs = append(h.runs, id)
	h.setLimit()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.runs = slices.DeleteFunc(h.runs, func(r *int64) bool { return r == id })
			h.setLimit()
		})
	}
}

// inForce is the limit outside a hold: the one a hold restores while
// one is on (h.mu held).
func (h *gcHold) inForce() int64 {
	if h.held {
		return h.limit
	}
	return debug.SetMemoryLimit(-1)
}

// setLimit makes the least run limit (none bound: the limit before the
// first bind) the limit outside a hold (h.mu held). In a hold the limit
// in force stays no higher than the hold's, and the hold's restore takes
// the new one.
func (h *gcHold) setLimit() {
	limit := h.unbound
	if len(h.runs) > 0 {
		limit = *slices.MinFunc(h.runs, func(a, b *int64) int { return cmp.Compare(*a, *b) })
	}
	if !h.held {
		debug.SetMemoryLimit(limit)
		return
	}
	h.limit = limit
	debug.SetMemoryLimit(min(limit, debug.SetMemoryLimit(-1)))
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
	h.tail(processMemory(), 5, 4)
}

// tail keeps the GC off after a bulk, held bytes held now, until the
// process holds num/den of that: the memory limit becomes the lesser of
// that and the hold's own (the run's bound, or what the machine has
// available; not a tail's before it, whose limit settle replaces), and the
// end of the first GC cycle from now restores GOGC and the limit as they
// were (h.mu held; h.gen already moved on). held <= 0 (unknown): no tail,
// the GC as it was at once.
func (h *gcHold) tail(held int64, num, den int64) {
	if held <= 0 {
		h.restore()
		return
	}
	debug.SetMemoryLimit(tailLimit(held, num, den, min(h.bound, h.limit)))
	h.restoreAfterCycle()
}

// restoreAfterCycle has the end of the first GC cycle from now restore
// GOGC and the limit (cycled), unless a later generation holds the GC by
// then (h.mu held).
func (h *gcHold) restoreAfterCycle() {
	// A cleanup runs once a GC cycle found its object unreachable: the
	// end of the first cycle from now. Not a tiny allocation (those share
	// a block with others and may outlive it).
	s := &gcSentinel{}
	runtime.AddCleanup(s, h.cycled, h.gen)
}

// tailLimit is the memory limit of a hold's tail: num/den of held, no
// higher than bound (the hold's limit: the run's bound, or what the
// machine has available).
func tailLimit(held, num, den, bound int64) int64 {
	return min(held/den*num, bound)
}

// settle ends a bulk that nothing runs beside yet (the VUs a run makes
// before its scenarios start: premade.go) with one GC cycle now; after it
// GOGC paces the next cycle to a goal of the live heap plus all the
// process holds (settledPercent), under the hold's limit, and that
// cycle's end restores GOGC and the limit (cycled). Nothing happens if no
// bulk is held or VUs are still being made.
//
// Marked now, with no mutator beside it, the heap's live size is known
// when the iterations start. (The tail leave sets instead, the heap
// growing by a quarter then a cycle, made that cycle come just as every
// VU's first iteration allocated: at 100 000 VUs over 7 agents each
// agent's mutators paid 2.5-4 s of CPU in assists, and a second cycle
// began at once behind 14 000 runnable VUs.) GOGC=100 restored at once
// after it gave the next cycle a goal of twice the live heap, which
// leaves out what the VUs add once they run: each VU's first iteration
// makes its connection, its goroutine's stack and the module members it
// reads first, and those stay live (at 14 000 VUs in one process: 139 MB
// of live heap after the settling cycle, 207-217 MB after the first
// period, beside 34 MB of stacks). That cycle came 13 s into the first
// period (the VUs' first iterations, spread over one sleep); held plus
// live moves it past the first 40 s there, with no assists
// (docs/performance.md, "GC in the first period"). It is GOGC=100's goal
// if all the process holds were live (the room between the heap's
// objects the settling cycle freed, and the runtime's own, are held
// already); a pace, not a memory limit: a limit reached ends its cycle
// at the limit with the freed memory not yet returned, and the next
// cycle began at once, before the cleanup that restores the GC had run
// behind thousands of runnable VUs.
func (h *gcHold) settle() {
	gen, ok := h.settling()
	if !ok {
		return
	}
	runtime.GC()
	h.settled(gen)
}

// settling begins settle: ok when a bulk is held and made, with the
// generation of the settling cycle. The generation moves on first: the
// cleanup of the tail leave set, which the settling cycle runs, then
// restores nothing (it would otherwise run before settled, and the GC
// would be back at GOGC=100 with the first period ahead).
func (h *gcHold) settling() (gen int, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held || h.making > 0 {
		return 0, false
	}
	h.gen++
	return h.gen, true
}

// settled ends settle once the settling cycle of generation gen ran:
// the tail (twice what the process holds), unless a later bulk holds the
// GC again.
func (h *gcHold) settled(gen int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.held || gen != h.gen || h.making > 0 {
		return
	}
	held, live := processMemory(), liveHeap()
	if held <= 0 || live <= 0 || h.percent < 0 {
		h.restore() // nothing known to pace by, or the GC was off before
		return
	}
	// The limit is the hold's own again (a leave tail's may be in force),
	// and GOGC paces the next cycle; the limit goes first, as in enterN.
	debug.SetMemoryLimit(min(h.bound, h.limit))
	debug.SetGCPercent(settledPercent(h.percent, held, live))
	h.paced = true
	h.restoreAfterCycle()
}

// turnsAllowed says a GC turn (gcturn.go) may run a cycle now: the GC is
// not held, or only settle's pace holds it, no VU being made. Never
// while the GC is off (a bulk, its tail) or settle's cycle runs.
func (h *gcHold) turnsAllowed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.held || (h.paced && h.making == 0)
}

// settledPercent is GOGC for the first cycle after the settling one:
// the heap's goal then is the live heap plus all the process holds
// (GOGC=100 would add the live heap alone), and never nearer than the
// GOGC the hold restores (percent) would put it.
func settledPercent(percent int, held, live int64) int {
	return max(percent, int(min(float64(held)*100/float64(live), math.MaxInt32)))
}

// liveHeap is the heap the last GC cycle found live; 0 when unknown.
func liveHeap() int64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
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
	h.held, h.paced = false, false
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
