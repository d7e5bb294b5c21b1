//go:build linux

package phase

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// The reader counts the cores the aggregate line sums and rereads the
// line from the start of the file at each read, not a cached copy.
func TestProcStatRereads(t *testing.T) {
	name := filepath.Join(t.TempDir(), "stat")
	write := func(s string) {
		if err := os.WriteFile(name, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu1 5 0 5 40 0 0 0 0 0 0\nintr 1 2 3\n")
	p, err := openProcStat(name)
	if err != nil {
		t.Fatal(err)
	}
	defer p.f.Close()
	if p.cores != 2 {
		t.Errorf("%d cores, want 2", p.cores)
	}
	if r := p.read(); !r.ok || r.busy != 20 || r.total != 100 {
		t.Errorf("first read %+v, want busy 20 of 100", r)
	}
	write("cpu  110 0 40 130 20 0 0 0 0 0\n")
	if r := p.read(); !r.ok || r.busy != 150 || r.total != 300 {
		t.Errorf("second read %+v, want busy 150 of 300", r)
	}
	write("")
	if r := p.read(); r.ok {
		t.Errorf("an empty file read %+v, want no reading", r)
	}
	write("intr 1 2 3\n")
	if _, err := openProcStat(name); err == nil {
		t.Error("a file without the aggregate line opened")
	}
	if _, err := openProcStat(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file opened")
	}
}

// The machine's own /proc/stat: readings that grow, busy within total,
// and a read that allocates nothing, nor does a watch tick that reads it.
func TestProcStatMachine(t *testing.T) {
	p, err := sharedProcStat()
	if err != nil {
		t.Fatalf("/proc/stat: %v", err)
	}
	a := p.read()
	b := p.read()
	if !a.ok || !b.ok || a.busy > a.total || b.total < a.total || b.busy < a.busy {
		t.Errorf("readings %+v then %+v", a, b)
	}
	if n := testing.AllocsPerRun(100, func() { p.read() }); n != 0 {
		t.Errorf("%v allocations a read, want 0", n)
	}
	w := newWatcherOn(false, WatchConfig{Colocated: 7}, 1, p.cores, openMachine)
	if w.machine.src == nil && w.machineOff() == "" {
		t.Fatal("the machine neither judged nor refused")
	}
	if w.machine.src == nil {
		t.Logf("the machine is not judged here: %s", w.machineOff())
	}
	at := time.Unix(1000, 0)
	tick := func() {
		at = at.Add(time.Second)
		c := at
		ts, r := stamp(func() time.Time { return c }, w.readCPU)
		w.observe(watchReading{at: ts, cpu: r.cpu, machine: r.machine})
	}
	tick()
	tick()
	if n := testing.AllocsPerRun(50, tick); n != 0 {
		t.Errorf("%v allocations a watch tick, want 0", n)
	}
}

// The cores /proc/stat sums are the machine's only when nothing narrows
// them: a process allowed fewer, or a cgroup quota below them, falls back.
func TestMachineSourceOf(t *testing.T) {
	p := &procStat{cores: 4}
	for _, c := range []struct {
		cpus  int
		quota float64
		ok    bool
	}{
		{4, 0, true},
		{4, 4, true},
		{4, 8, true},
		{2, 0, false},   // an affinity mask or cpuset of 2 of the 4
		{4, 1.5, false}, // a quota of 1.5 cores
	} {
		src, why := machineSourceOf(p, c.cpus, c.quota)
		if (src != nil) != c.ok || (why == "") != c.ok {
			t.Errorf("%d cpus, quota %.1f: source %v, reason %q; want ok %v", c.cpus, c.quota, src != nil, why, c.ok)
		}
	}
}

func TestQuotaAt(t *testing.T) {
	dir := t.TempDir()
	write := func(sub, name, s string) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	write("v1", "cpu.cfs_quota_us", "250000\n")
	v1 := write("v1", "cpu.cfs_period_us", "100000\n")
	for _, c := range []struct {
		dir   string
		quota float64
		ok    bool
	}{
		{write("v2max", "cpu.max", "max 100000\n"), 0, false},
		{write("v2", "cpu.max", "150000 100000\n"), 1.5, true},
		{write("v1noperiod", "cpu.cfs_quota_us", "250000\n"), 0, false},
		{v1, 2.5, true},
		{write("v1none", "cpu.cfs_quota_us", "-1\n"), 0, false},
		{filepath.Join(dir, "absent"), 0, false},
	} {
		if q, ok := quotaAt(c.dir); ok != c.ok || q != c.quota {
			t.Errorf("quotaAt(%s) = %v, %v; want %v, %v", filepath.Base(c.dir), q, ok, c.quota, c.ok)
		}
	}
}

// MachineCPU is the cpu rule's reading: where the rule reads the machine
// it gives the same counters (busy within total, neither going back) and
// allocates nothing; where the rule falls back, no reader and the rule's
// reason.
func TestMachineCPUIsTheRulesReading(t *testing.T) {
	read, cores, why := MachineCPU()
	src, ruleWhy := openMachine(runtime.NumCPU())
	if cores != runtime.NumCPU() || (read == nil) != (src == nil) || why != ruleWhy {
		t.Fatalf("MachineCPU: reader %v, %d cores, %q; the rule's: reader %v, %q", read != nil, cores, why, src != nil, ruleWhy)
	}
	if read == nil {
		if why == "" {
			t.Fatal("no reader and no reason")
		}
		return
	}
	b0, t0, ok0 := read()
	r := src()
	b1, t1, ok1 := read()
	if !ok0 || !ok1 || !r.ok || b0 > t0 || b1 < b0 || t1 < t0 || r.total < t0 || r.total > t1 {
		t.Fatalf("readings %d/%d %v, the rule's %+v, then %d/%d %v", b0, t0, ok0, r, b1, t1, ok1)
	}
	if n := testing.AllocsPerRun(100, func() { read() }); n != 0 {
		t.Fatalf("a reading allocates %v times", n)
	}
}
