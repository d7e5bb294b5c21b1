//go:build linux

package phase

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// statBusy sums user, nice, system, irq, softirq and steal of the cores
// asked for, never the machine's "cpu" line, idle or iowait.
func TestStatBusy(t *testing.T) {
	stat := []byte("cpu  900 90 900 9000 900 0 90 9 0 0\n" +
		"cpu0 100 10 20 5000 400 0 3 4 0 0\n" +
		"cpu1 200 20 40 4000 500 0 6 8 0 0\n" +
		"intr 12345 1 2\nctxt 999\n")
	for _, c := range []struct {
		cores []int
		want  time.Duration
	}{
		{[]int{0}, (100 + 10 + 20 + 0 + 3 + 4) * 10 * time.Millisecond},
		{[]int{1}, (200 + 20 + 40 + 0 + 6 + 8) * 10 * time.Millisecond},
		{[]int{0, 1}, (137 + 274) * 10 * time.Millisecond},
		{[]int{2}, -1},
	} {
		in := func(n int) bool {
			for _, c := range c.cores {
				if c == n {
					return true
				}
			}
			return false
		}
		if got := statBusy(stat, in); got != c.want {
			t.Errorf("cores %v: %v, want %v", c.cores, got, c.want)
		}
	}
	if got := statBusy([]byte("cpu0 1 2 x 4 5 6 7 8 0 0\n"), func(int) bool { return true }); got != -1 {
		t.Errorf("a field that is not a number: %v, want -1", got)
	}
}

// A colocated process's watch reads the machine's busy cores, the ones
// its affinity mask gives it, and that time grows while this test spins;
// a process alone reads its own CPU time.
func TestColocatedWatchReadsMachine(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	w := newWatcher(false, WatchConfig{Colocated: 7})
	if w.cores != float64(set.Count()) {
		t.Fatalf("colocated: judged against %v cores, want the machine's %d", w.cores, set.Count())
	}
	first := w.cpu()
	deadline := time.Now().Add(20 * time.Second)
	for w.cpu() <= first {
		if time.Now().After(deadline) {
			t.Fatalf("the machine's busy time stayed at %v over 20 s of spinning", first)
		}
		for i := 0; i < 1e6; i++ {
			spinSink += i
		}
	}
	alone := newWatcher(false, WatchConfig{Colocated: 1})
	if own := alone.cpu(); own <= 0 || own > w.cpu() {
		t.Errorf("alone: read %v, want this process's CPU time (the machine's is %v)", own, w.cpu())
	}
}

var spinSink int
