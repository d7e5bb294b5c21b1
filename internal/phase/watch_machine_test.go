package phase

import (
	"testing"
	"time"
)

// noMachine is a platform without a machine reading.
func noMachine(int) (machineSource, string) { return nil, "test: no machine" }

// fakeMachine is a machine of cores cores whose busy cores at each instant
// busyAt says, read on a fake clock: its counters are the integral, in
// 10 ms clock ticks, from t0 to the clock's instant at the read.
type fakeMachine struct {
	t0     time.Time
	cores  float64
	busyAt func(d time.Duration) float64 // busy cores d after t0
	clk    *time.Time                    // the instant a read sees
	reads  int
	failAt int // the read (1-based) that fails; 0: none
}

const fakeJiffy = 10 * time.Millisecond

func (m *fakeMachine) read() machineReading {
	m.reads++
	if m.reads == m.failAt {
		return machineReading{}
	}
	var busy float64
	end := m.clk.Sub(m.t0)
	for d := time.Duration(0); d < end; d += fakeJiffy {
		busy += m.busyAt(d)
	}
	ticks := float64(end / fakeJiffy)
	return machineReading{busy: uint64(busy + 0.5), total: uint64(ticks*m.cores + 0.5), ok: true}
}

// colocated7 is one of 7 local agents with GOMAXPROCS=1 on 2 cores (its
// share 2/7 of a core, the cpu rule's threshold 0.257 cores), judging the
// machine through m; Every is a second, Ticks one.
func colocated7(t *testing.T, m *fakeMachine) *watcher {
	t.Helper()
	opened := 0
	w := newWatcherOn(false, WatchConfig{Every: time.Second, Ticks: 1, Colocated: 7}, 1, 2,
		func(cpus int) (machineSource, string) {
			opened++
			if cpus != 2 {
				t.Errorf("machine opened for %d cores, want 2", cpus)
			}
			return m.read, ""
		})
	if opened != 1 {
		t.Fatalf("machine opened %d times, want once", opened)
	}
	return w
}

// tickAt reads the watch's counters at the fake clock's instant, as the
// watch loop does (stamp, readCPU), for a process that has used cpu.
func tickAt(w *watcher, clk *time.Time, at time.Time, cpu time.Duration) GeneratorStatus {
	*clk = at
	w.cpu = func() time.Duration { return cpu }
	t, r := stamp(func() time.Time { return *clk }, w.readCPU)
	return w.observe(watchReading{at: t, cpu: r.cpu, machine: r.machine})
}

// A colocated agent above its share is marked only when the machine had
// no room left: both halves of the AND decide.
func TestColocatedCPURuleJudgesMachine(t *testing.T) {
	for _, c := range []struct {
		name    string
		process time.Duration // CPU used in the one-second tick
		machine float64       // the machine's busy cores over it
		signal  string
		spared  int // the ticks the machine let off
	}{
		// An agent marking its heap on 0.9 cores while the machine has
		// idle cores: nothing is starved.
		{"above its share, machine with room", 900 * time.Millisecond, 1.5, "", 1},
		{"above its share, machine just below 0.9", 900 * time.Millisecond, 1.78, "", 1},
		{"above its share, machine full", 900 * time.Millisecond, 1.9, "cpu", 0},
		{"at its share, machine at 0.9", 260 * time.Millisecond, 1.8, "cpu", 0},
		// The machine full of others' work: this agent is not the one short.
		{"below its share, machine full", 200 * time.Millisecond, 2, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			clk := t0
			m := &fakeMachine{t0: t0, cores: 2, clk: &clk, busyAt: func(time.Duration) float64 { return c.machine }}
			w := colocated7(t, m)
			tickAt(w, &clk, t0, 0)
			st := tickAt(w, &clk, t0.Add(time.Second), c.process)
			if st.Signal != c.signal {
				t.Errorf("signal %q, want %q (process %.2f cores, machine %.2f)", st.Signal, c.signal, st.CPU, st.Machine)
			}
			if st.Machine < c.machine-0.01 || st.Machine > c.machine+0.01 {
				t.Errorf("machine read %.3f cores, want %.2f", st.Machine, c.machine)
			}
			if s := w.summary(); s.PeakMachine != st.Machine || s.MachineSpared != c.spared {
				t.Errorf("peak machine %.3f, %d ticks spared; want the tick's %.3f, %d", s.PeakMachine, s.MachineSpared, st.Machine, c.spared)
			}
		})
	}
}

// The machine's reading spans the tick the process's does: each tick is
// judged on its own machine, and a reading dropped for coming too soon
// moves neither's start.
func TestMachineReadingSpansTheTick(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := t0
	sec := func(f float64) time.Time { return t0.Add(time.Duration(f * float64(time.Second))) }
	// Full in the first second; idle in 1.0–1.4 s and full after, so that
	// 1–2 s is 1.2 cores busy and 1.4–2 s would be 2.
	m := &fakeMachine{t0: t0, cores: 2, clk: &clk, busyAt: func(d time.Duration) float64 {
		if d < time.Second || d >= 1400*time.Millisecond {
			return 2
		}
		return 0
	}}
	w := colocated7(t, m)
	busy := func(s float64) time.Duration { return time.Duration(s * 0.9 * float64(time.Second)) } // 0.9 cores throughout
	tickAt(w, &clk, sec(0), 0)
	if st := tickAt(w, &clk, sec(1), busy(1)); st.Signal != "cpu" {
		t.Errorf("0–1 s, machine full: signal %q (machine %.2f), want cpu", st.Signal, st.Machine)
	}
	first := w.status()
	if st := tickAt(w, &clk, sec(1.4), busy(1.4)); st != first {
		t.Errorf("a reading 0.4 s into a 1 s tick ends it: %+v", st)
	}
	st := tickAt(w, &clk, sec(2), busy(2))
	if st.Machine < 1.19 || st.Machine > 1.21 || st.Signal != "" {
		t.Errorf("1–2 s: machine %.2f cores, signal %q; want 1.2 over the whole tick and no mark", st.Machine, st.Signal)
	}
}

// The machine's counters are read inside stamp's bracket, after the
// process's CPU time: a thread descheduled between the two reads widens
// the bracket, and stamp reads both again.
func TestStampBracketsTheMachine(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := t0.Add(time.Second)
	m := &fakeMachine{t0: t0, cores: 2, clk: &clk, busyAt: func(d time.Duration) float64 { return 2 * float64(d%time.Second) / float64(time.Second) }}
	w := colocated7(t, m)
	var cpuReads int
	w.cpu = func() time.Duration {
		cpuReads++
		if cpuReads == 1 {
			clk = clk.Add(40 * time.Millisecond) // descheduled before the machine read
		}
		return time.Second
	}
	now := func() time.Time { clk = clk.Add(time.Microsecond); return clk }
	at, r := stamp(now, w.readCPU)
	if cpuReads != 2 || m.reads != 2 {
		t.Fatalf("%d CPU and %d machine reads, want both read again (2 and 2)", cpuReads, m.reads)
	}
	// The machine's reading at the instant stamp returns.
	saved := clk
	clk = at
	want := m.read()
	clk = saved
	if d := int64(r.machine.busy) - int64(want.busy); d < -1 || d > 1 || r.machine.total != want.total {
		t.Errorf("machine read %+v, at the returned instant %+v", r.machine, want)
	}
}

// Where the machine cannot be read the rule falls back to the share alone:
// at opening, or from a failed read on, once (the source is not read
// again), with no reading reported.
func TestMachineFallback(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	t.Run("cannot open", func(t *testing.T) {
		w := newWatcherOn(false, WatchConfig{Every: time.Second, Ticks: 1, Colocated: 7}, 1, 2, noMachine)
		if w.machineOff() != "test: no machine" {
			t.Errorf("reason %q, want the opener's", w.machineOff())
		}
		clk := t0
		tickAt(w, &clk, sec(0), 0)
		st := tickAt(w, &clk, sec(1), 300*time.Millisecond)
		if st.Signal != "cpu" || st.Machine != -1 || w.summary().PeakMachine != -1 {
			t.Errorf("the share alone: %+v, want cpu and no machine", st)
		}
	})
	t.Run("a read fails", func(t *testing.T) {
		clk := t0
		// The machine has room throughout: while it is read, no mark.
		m := &fakeMachine{t0: t0, cores: 2, clk: &clk, failAt: 3, busyAt: func(time.Duration) float64 { return 1 }}
		w := colocated7(t, m)
		var sts []GeneratorStatus
		for i := range 5 {
			sts = append(sts, tickAt(w, &clk, sec(i), time.Duration(i)*300*time.Millisecond))
		}
		if sts[1].Signal != "" || sts[1].Machine < 0.99 {
			t.Errorf("tick 1, machine read: %+v, want 1 core and no mark", sts[1])
		}
		for i := 2; i < 5; i++ {
			if sts[i].Signal != "cpu" || sts[i].Machine != -1 {
				t.Errorf("tick %d after the failed read: %+v, want the share's cpu and no machine", i, sts[i])
			}
		}
		if m.reads != 3 {
			t.Errorf("machine read %d times, want 3: not again after the failure", m.reads)
		}
		if w.machineOff() == "" {
			t.Error("no reason kept for the fallback")
		}
	})
}

// Only a colocated process bounded by its share reads the machine: a lone
// one, or one bounded by its GOMAXPROCS, keeps the rule it had.
func TestMachineBound(t *testing.T) {
	for _, c := range []struct {
		procs, cpus, colocated int
		want                   bool
	}{
		{2, 2, 0, false},
		{2, 2, 1, false},
		{1, 2, 7, true},   // 7 agents, GOMAXPROCS=1, 2 cores: a share of 2/7
		{2, 2, 7, true},   // the same with GOMAXPROCS=2
		{1, 16, 2, false}, // GOMAXPROCS=1 under a share of 8
		{8, 16, 2, false}, // GOMAXPROCS at the share exactly
		{9, 16, 2, true},
	} {
		if got := machineBound(c.procs, c.cpus, c.colocated); got != c.want {
			t.Errorf("machineBound(GOMAXPROCS %d, %d CPUs, %d colocated) = %v, want %v", c.procs, c.cpus, c.colocated, got, c.want)
		}
		opened := false
		w := newWatcherOn(false, WatchConfig{Colocated: c.colocated}, c.procs, c.cpus, func(int) (machineSource, string) {
			opened = true
			return nil, "test"
		})
		if opened != c.want {
			t.Errorf("GOMAXPROCS %d, %d CPUs, %d colocated: machine opened %v, want %v", c.procs, c.cpus, c.colocated, opened, c.want)
		}
		// A lone process at 0.95 of its cores is marked as before.
		if !c.want {
			t0 := time.Unix(1000, 0)
			w.observe(watchReading{at: t0})
			w.observe(watchReading{at: t0.Add(time.Second), cpu: time.Duration(w.cores * 0.95 * float64(time.Second))})
			if st := w.observe(watchReading{at: t0.Add(2 * time.Second), cpu: time.Duration(w.cores * 1.9 * float64(time.Second))}); st.Signal != "cpu" {
				t.Errorf("GOMAXPROCS %d, %d CPUs, %d colocated at 0.95 × %.2f cores: %+v, want cpu", c.procs, c.cpus, c.colocated, w.cores, st)
			}
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	for _, c := range []struct {
		in          string
		busy, total uint64
		ok          bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 2 30 400 50 6 7 8 90 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 100 + 2 + 30 + 6 + 7 + 8, 100 + 2 + 30 + 400 + 50 + 6 + 7 + 8, true},
		{"cpu  1 2 3 4 5 6 7 8\n", 1 + 2 + 3 + 6 + 7 + 8, 36, true},
		{"cpu  1 2 3 4 5 6 7 8", 0, 0, false}, // cut off: the buffer ended in a field
		{"cpu  1 2 3 4 5 6 7\n", 0, 0, false},
		{"cpu0 1 2 3 4 5 6 7 8 9 10\n", 0, 0, false},
		{"cpu  1 2 x 4 5 6 7 8 9 10\n", 0, 0, false},
		{"", 0, 0, false},
	} {
		r := parseStatCPU([]byte(c.in))
		if r.ok != c.ok || r.busy != c.busy || r.total != c.total {
			t.Errorf("parseStatCPU(%q) = %+v, want busy %d total %d ok %v", c.in, r, c.busy, c.total, c.ok)
		}
	}
}
