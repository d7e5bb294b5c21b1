package phase

import (
	"runtime"
	"sync/atomic"
)

// The cpu rule of a colocated process also judges the machine. Its share
// of the cores (usableCores: the machine's cores over the N processes
// sharing them) assumes every other process is using its own share. When
// they are not — seven local agents whose GC cycles come at different
// moments, one marking its heap on ~0.9 cores while the machine has idle
// cores — the process uses more than its share and nothing is starved:
// the direct readings (wait, read) stay quiet. So when the share, not the
// process's own GOMAXPROCS, bounds it (machineBound), the cpu rule marks a
// tick only when the process used CPU × its share AND the machine as a
// whole had no room left: its busy CPU over the same tick at least CPU ×
// its cores.
//
// The machine's busy CPU is Linux's /proc/stat aggregate line, every
// field but idle and iowait (steal included: time a hypervisor gave
// elsewhere is no room for us), over all the fields' sum: the busy share
// of the cores' time over the tick, times the cores. A share, not jiffies
// over wall time, so a reading never says more cores than there are
// (per-core times come in lumps: a rule that read busy jiffies over a
// 250 ms tick saw 2.32 cores on 2, docs/performance.md). The reading is
// taken inside stamp's bracket, beside the process's CPU time, so both
// cover the same span.
//
// The cores the colocated processes may use together: N × GOMAXPROCS at
// most, and the machine's. When the share binds, GOMAXPROCS is above
// cores/N, so N × GOMAXPROCS is above the machine's cores: the machine's
// cores (runtime.NumCPU, the process's affinity) are the bound. When a
// process's GOMAXPROCS binds instead, its own limit is the one it hits
// whatever the machine does, so its rule is the lone process's, unchanged.
//
// The machine's cores are the ones /proc/stat counts only when nothing
// narrows them: an affinity mask or cpuset that leaves the process fewer
// cores than the aggregate line sums, or a cgroup CPU quota below the
// cores (colocated processes share their cgroup, so the quota, not the
// cores, is what they fill, and /proc/stat cannot see its throttling).
// Then, and where /proc/stat cannot be read (not Linux, an error at any
// read), the rule falls back to the share alone, as before: once, for
// the rest of the watch, with no log line; the ticks' Machine reads -1
// from then on and the watcher keeps the reason (machineOff). The
// summary's MachineSpared counts the ticks the machine's room let off.

// machineReading is the machine's CPU counters at one instant, in the
// kernel's clock ticks summed over its cores: busy (all but idle and
// iowait) and total (every field). ok false: no reading.
type machineReading struct {
	busy, total uint64
	ok          bool
}

// machineSource reads the machine's counters now; ok false on an error.
type machineSource func() machineReading

// machineOpener is a platform's machine source for a process that may
// use cpus cores (runtime.NumCPU), or nil and why not.
type machineOpener func(cpus int) (machineSource, string)

// MachineCPU is the cpu rule's reading of the machine for the rest of a
// colocated process (the GC turns, internal/script): read returns the
// machine's counters now, busy and total clock ticks summed over its
// cores, so that the busy share between two readings is Δbusy/Δtotal
// and the busy cores that share times cores (runtime.NumCPU). A read
// allocates nothing and may be called from any goroutine (the process's
// one /proc/stat file, under its lock); ok false: it failed. read is nil,
// and why says why, where the cpu rule falls back to the share alone:
// not Linux, /proc/stat unreadable, an affinity mask or cpuset leaving
// the process fewer cores than /proc/stat sums, a cgroup quota below them.
func MachineCPU() (read func() (busy, total uint64, ok bool), cores int, why string) {
	cores = runtime.NumCPU()
	src, why := openMachine(cores)
	if src == nil {
		return nil, cores, why
	}
	return func() (uint64, uint64, bool) { r := src(); return r.busy, r.total, r.ok }, cores, ""
}

// machineBound says whether a process of procs Ps among colocated
// processes on cpus cores is bounded by its share of them rather than by
// its GOMAXPROCS: then its cpu rule judges the machine too.
func machineBound(procs, cpus, colocated int) bool {
	return colocated > 1 && float64(cpus)/float64(colocated) < float64(procs)
}

// machineWatch is a watcher's reading of the machine: the source, the
// cores it counts, and whether it failed. Its source is called from the
// watch loop alone; off may be read from any goroutine (machineOff).
type machineWatch struct {
	src   machineSource // nil: the machine is not judged
	cores float64
	// off is why the machine is not judged ("" while it is, or when it
	// never was: src nil from the start).
	off atomic.Pointer[string]
}

// setMachine makes w judge the machine of cores cores through src, or,
// with src nil, records why it does not (why "" when it was never asked).
func (w *watcher) setMachine(src machineSource, cores int, why string) {
	w.machine.src, w.machine.cores = src, float64(cores)
	w.machine.off.Store(nil)
	if src == nil && why != "" {
		w.machine.off.Store(&why)
	}
}

// readMachine reads the machine's counters while it is judged; the first
// failed reading turns it off for good (the fallback, once).
func (w *watcher) readMachine() machineReading {
	m := &w.machine
	if m.src == nil || m.off.Load() != nil {
		return machineReading{}
	}
	r := m.src()
	if !r.ok {
		why := "a /proc/stat reading failed"
		m.off.Store(&why)
	}
	return r
}

// machineOff is why the machine is not judged ("" while it is, or for a
// process whose rule never judges it).
func (w *watcher) machineOff() string {
	if p := w.machine.off.Load(); p != nil {
		return *p
	}
	return ""
}

// machineCores is the machine's busy cores between two readings (-1: no
// reading in one of them, or no time between them).
func (w *watcher) machineCores(prev, cur machineReading) float64 {
	if !prev.ok || !cur.ok || cur.total <= prev.total || cur.busy < prev.busy {
		return -1
	}
	busy := min(cur.busy-prev.busy, cur.total-prev.total)
	return float64(busy) / float64(cur.total-prev.total) * w.machine.cores
}

// parseStatCPU reads the aggregate "cpu" line at the start of b
// (/proc/stat: "cpu  user nice system idle iowait irq softirq steal guest
// guest_nice"). guest and guest_nice are already in user and nice, so
// neither counts again. ok false when b does not start with that line's
// first eight fields.
func parseStatCPU(b []byte) (r machineReading) {
	const prefix = "cpu "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return r
	}
	i := len(prefix)
	for field := 0; field < 8; field++ {
		for i < len(b) && b[i] == ' ' {
			i++
		}
		start := i
		var v uint64
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v = v*10 + uint64(b[i]-'0')
		}
		if i == start || i >= len(b) || (b[i] != ' ' && b[i] != '\n') {
			return machineReading{}
		}
		r.total += v
		if field != 3 && field != 4 { // idle, iowait
			r.busy += v
		}
	}
	r.ok = true
	return r
}
