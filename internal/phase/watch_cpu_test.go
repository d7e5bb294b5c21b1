package phase

import (
	"math"
	"testing"
	"time"
)

// busyProcess is a process that keeps both of its two cores busy, as the
// kernel books it: each core's CPU time reaches the process's total at
// that core's scheduler tick (booking, from t0), and in between lags it.
type busyProcess struct {
	t0      time.Time
	booking time.Duration
}

// cpu is the process's CPU time as read at t: core 0 (the reader's) is
// booked to the instant, core 1 up to its last scheduler tick.
func (p busyProcess) cpu(t time.Time) time.Duration {
	d := t.Sub(p.t0)
	return d + d/p.booking*p.booking
}

// A tick cut short — the reading before it came late, the ticker's next
// fire at once — is not judged: over a few milliseconds the process's CPU
// time is mostly the kernel's booking lag, and such a tick read twice the
// machine's cores. The reading that comes too soon is dropped and the
// tick runs on to the next; no tick reads more cores than the process has.
func TestWatchShortTick(t *testing.T) {
	t0 := time.Unix(1000, 0)
	proc := busyProcess{t0: t0, booking: 4 * time.Millisecond}
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	w := newWatcher(false, WatchConfig{})
	w.cores = 2
	// The ticker fires every 250 ms; the watch goroutine waited to run
	// the 250 ms fire until 499 ms (core 1's last 3 ms not booked yet)
	// and ran the 500 ms fire at once.
	var sts []GeneratorStatus
	for _, at := range []time.Time{ms(0), ms(250), ms(499), ms(500), ms(750), ms(1000)} {
		sts = append(sts, w.observe(watchReading{at: at, cpu: proc.cpu(at)}))
	}
	s := w.summary()
	if s.PeakCPU > 2.02 {
		t.Errorf("peak %.2f cores on a 2-core process (statuses %+v)", s.PeakCPU, sts)
	}
	if s.Ticks != 4 {
		t.Errorf("%d ticks, want 4: 0–250, 250–499, 499–750 (the 500 ms reading dropped), 750–1000", s.Ticks)
	}
	if st := sts[3]; st != sts[2] {
		t.Errorf("a dropped reading changes the status: %+v after %+v", st, sts[2])
	}
	if s.PeakCPU < 1.98 || s.SaturatedTicks != 3 || s.Signals["cpu"] != 3 {
		// The first tick is one rule-tick alone; the rest are saturated.
		t.Errorf("a busy process: %+v, want ~2 cores and cpu-saturated ticks", s)
	}
}

// stamp reads the CPU time between two clock reads and tries again when a
// thread descheduled between them put the reads apart: the instant it
// returns is the CPU read's, within half the narrowest bracket.
func TestStamp(t *testing.T) {
	t0 := time.Unix(1000, 0)
	proc := busyProcess{t0: t0, booking: time.Nanosecond}
	var (
		clk    = t0.Add(time.Second)
		delays []time.Duration // before each CPU read, the thread waits this long
		reads  int
	)
	now := func() time.Time { clk = clk.Add(time.Microsecond); return clk }
	cpu := func() time.Duration {
		if reads < len(delays) {
			clk = clk.Add(delays[reads])
		}
		reads++
		return proc.cpu(clk)
	}
	for _, c := range []struct {
		name   string
		delays []time.Duration
		reads  int
		skew   time.Duration // how far the instant may lie from the CPU read's
	}{
		{"no delay", nil, 1, time.Microsecond},
		{"descheduled once", []time.Duration{40 * time.Millisecond}, 2, time.Microsecond},
		{"descheduled twice", []time.Duration{40 * time.Millisecond, 30 * time.Millisecond}, 3, time.Microsecond},
		{"every try late: the narrowest", []time.Duration{40 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond}, 3, 5*time.Millisecond + time.Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			delays, reads = c.delays, 0
			at, used := stamp(now, cpu)
			if reads != c.reads {
				t.Errorf("%d CPU reads, want %d", reads, c.reads)
			}
			// The process's CPU time at the instant returned, against the
			// CPU time read: two cores' worth of the skew at most.
			if d := used - proc.cpu(at); d > 2*c.skew || d < -2*c.skew {
				t.Errorf("instant %v, CPU %v: %v off the CPU read's instant", at.Sub(t0), used, d/2)
			}
		})
	}
}

// A process's usable cores: its GOMAXPROCS, and with N processes sharing
// the machine its Nth of the machine's cores if that is less. A
// process's own GOMAXPROCS does not shrink its share: 7 agents with
// GOMAXPROCS=1 on 2 cores together use both.
func TestUsableCores(t *testing.T) {
	for _, c := range []struct {
		procs, cpus, colocated int
		want                   float64
	}{
		{2, 2, 0, 2},
		{2, 2, 1, 2},
		{1, 2, 1, 1},       // GOMAXPROCS=1 alone on the machine: one core
		{2, 2, 7, 2.0 / 7}, // 7 local agents on 2 cores
		{1, 2, 7, 2.0 / 7}, // the same with GOMAXPROCS=1: still 2/7, not 1/7
		{1, 16, 2, 1},      // GOMAXPROCS=1 under its share of 8: one core
		{8, 16, 4, 4},
	} {
		if got := usableCores(c.procs, c.cpus, c.colocated); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("usableCores(GOMAXPROCS %d, %d CPUs, %d colocated) = %v, want %v", c.procs, c.cpus, c.colocated, got, c.want)
		}
	}
}

// One of 7 local agents with GOMAXPROCS=1 on 2 cores is saturated at 0.9
// of its 2/7 of the machine (0.257 cores), not at 0.9/7 of its one P
// (0.129): 0.2 cores is not saturated, 0.27 is.
// (Without a machine reading: with one, the machine must be full too,
// TestColocatedCPURuleJudgesMachine.)
func TestColocatedCPURule(t *testing.T) {
	for _, c := range []struct {
		cpu    time.Duration // per one-second tick
		signal string
	}{{200 * time.Millisecond, ""}, {270 * time.Millisecond, "cpu"}} {
		w := newWatcherOn(false, WatchConfig{Ticks: 1, Colocated: 7}, 1, 2, noMachine)
		t0 := time.Unix(1000, 0)
		w.observe(watchReading{at: t0})
		st := w.observe(watchReading{at: t0.Add(time.Second), cpu: c.cpu})
		if st.Signal != c.signal {
			t.Errorf("%v of CPU in a second: signal %q, want %q", c.cpu, st.Signal, c.signal)
		}
	}
}
