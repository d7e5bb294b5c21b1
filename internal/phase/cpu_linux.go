//go:build linux

package phase

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// userHz is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture Go supports (the kernel's ABI, not its scheduler tick).
const userHz = 100

// machineCPU returns a reader of the busy CPU time so far of the cores
// this process may run on (its affinity mask), summed from /proc/stat's
// per-core lines (user, nice, system, irq, softirq and steal: all but idle
// and iowait), and how many cores that is; nil, 0 when the mask or the
// file cannot be read. Colocated processes judge the machine with it:
// whoever uses the cores (the other agents, the target itself), a full
// machine starves each of them alike.
func machineCPU() (read func() time.Duration, cores int) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() == 0 {
		return nil, 0
	}
	read = func() time.Duration { return procStatBusy(&set) }
	if read() < 0 {
		return nil, 0
	}
	return read, set.Count()
}

// procStatBusy is the busy time of the cores in set, from /proc/stat;
// -1 when it cannot be read.
func procStatBusy(set *unix.CPUSet) time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	return statBusy(b, set.IsSet)
}

// statBusy sums the busy fields (1–3 and 6–8: user, nice, system, irq,
// softirq, steal) of the "cpuN" lines of a /proc/stat text whose N in
// reports true; -1 when no such line parses.
func statBusy(b []byte, in func(int) bool) time.Duration {
	var jiffies int64
	found := false
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 9 || !bytes.HasPrefix(f[0], []byte("cpu")) || len(f[0]) == 3 {
			continue
		}
		n, err := strconv.Atoi(string(f[0][3:]))
		if err != nil || !in(n) {
			continue
		}
		for _, i := range [...]int{1, 2, 3, 6, 7, 8} {
			v, err := strconv.ParseInt(string(f[i]), 10, 64)
			if err != nil {
				return -1
			}
			jiffies += v
		}
		found = true
	}
	if !found {
		return -1
	}
	return time.Duration(jiffies) * (time.Second / userHz)
}
