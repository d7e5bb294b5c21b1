//go:build linux

package phase

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
)

// procStatPath is the machine's CPU counters.
const procStatPath = "/proc/stat"

// procStat reads /proc/stat's aggregate line through one file the
// process keeps open: a read is a pread of its first bytes at offset 0
// into a buffer it reuses and a parse of one line, allocating nothing.
// One per process (every phase's watcher shares it), so the file is
// never left open by a phase that ended; mu guards the buffer.
type procStat struct {
	mu    sync.Mutex
	f     *os.File
	cores int // the cpuN lines the aggregate sums
	buf   [512]byte
}

// sharedProcStat is the process's reader, opened at its first use.
var sharedProcStat = sync.OnceValues(func() (*procStat, error) { return openProcStat(procStatPath) })

func openProcStat(name string) (*procStat, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	all, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &procStat{f: f}
	for line := range bytes.Lines(all) {
		if len(line) > 3 && string(line[:3]) == "cpu" && line[3] >= '0' && line[3] <= '9' {
			p.cores++
		}
	}
	if r := p.read(); !r.ok || p.cores == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: no aggregate cpu line", name)
	}
	return p, nil
}

// read is the aggregate line now.
func (p *procStat) read() machineReading {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, err := p.f.ReadAt(p.buf[:], 0)
	if err != nil && err != io.EOF {
		return machineReading{}
	}
	return parseStatCPU(p.buf[:n])
}

// openMachine is /proc/stat for a process that may use cpus cores, unless
// something narrows the cores it counts (watch_machine.go).
func openMachine(cpus int) (machineSource, string) {
	p, err := sharedProcStat()
	if err != nil {
		return nil, err.Error()
	}
	return machineSourceOf(p, cpus, cgroupQuota())
}

// machineSourceOf is p's reading for a process that may use cpus cores
// under a cgroup quota of quota cores (0: none), or why not.
func machineSourceOf(p *procStat, cpus int, quota float64) (machineSource, string) {
	if p.cores != cpus {
		return nil, fmt.Sprintf("the process may use %d of the %d cores /proc/stat sums", cpus, p.cores)
	}
	if quota > 0 && quota < float64(cpus) {
		return nil, fmt.Sprintf("a cgroup CPU quota of %.2f cores, below the machine's %d", quota, cpus)
	}
	return p.read, ""
}

// cgroupQuota is the lowest CPU quota, in cores, of the cgroups that hold
// this process, from its own up (cgroup v2's cpu.max, v1's
// cpu.cfs_quota_us over cpu.cfs_period_us), the mount's root included
// (a container sees its own group there); 0 when none is found.
var cgroupQuota = sync.OnceValue(func() float64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	quota := math.Inf(1)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// "hierarchy-ID:controllers:path"; v2's is "0::path".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root = "/sys/fs/cgroup"
		case hasController(parts[1], "cpu"):
			root = "/sys/fs/cgroup/cpu"
		default:
			continue
		}
		for dir := path.Clean("/" + parts[2]); ; dir = path.Dir(dir) {
			if q, ok := quotaAt(path.Join(root, dir)); ok {
				quota = min(quota, q)
			}
			if dir == "/" {
				break
			}
		}
	}
	if math.IsInf(quota, 1) {
		return 0
	}
	return quota
})

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// quotaAt is the CPU quota in cores of the cgroup at dir, if it sets one.
func quotaAt(dir string) (float64, bool) {
	if b, err := os.ReadFile(path.Join(dir, "cpu.max")); err == nil {
		f := strings.Fields(string(b)) // "max 100000" or "quota period"
		if len(f) == 2 && f[0] != "max" {
			return quotaOf(f[0], f[1])
		}
		return 0, false
	}
	q, err1 := os.ReadFile(path.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(path.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return quotaOf(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

func quotaOf(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false // -1: no quota (v1)
	}
	return q / p, true
}
