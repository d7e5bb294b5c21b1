package phase

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The trace names the rule each tick held, saturated or not: a busy
// process's first tick holds cpu alone (the streak needs two), the next
// ones are saturated; the unix time puts each line on the machine's clock.
func TestWatchTraceLines(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(WatchTraceEnv, dir)
	if err := TraceWatchFromEnv(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traceDir.Store(nil) })
	t0 := time.Unix(1000, 0)
	proc := busyProcess{t0: t0, booking: time.Nanosecond}
	w := newWatcher(false, WatchConfig{})
	w.cores = 2
	tr := openWatchTrace()
	if tr == nil {
		t.Fatal("no trace opened with the directory set")
	}
	for i := 0; i <= 3; i++ {
		at := t0.Add(time.Duration(i) * 250 * time.Millisecond)
		st := w.observe(watchReading{at: at, cpu: proc.cpu(at)})
		if w.judged(at) && i > 0 {
			tr.tick(at, st)
		}
	}
	tr.close()
	files, _ := filepath.Glob(filepath.Join(dir, "watch-*.csv"))
	if len(files) != 1 {
		t.Fatalf("files %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "unix_s,") {
		t.Fatalf("want a header and 3 ticks:\n%s", b)
	}
	cols := strings.Split(lines[0], ",")
	col := func(line int, name string) string {
		for i, c := range cols {
			if c == name {
				return strings.Split(lines[line], ",")[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for i, want := range []struct{ held, sat string }{{"cpu", "false"}, {"cpu", "true"}, {"cpu", "true"}} {
		if h, s := col(i+1, "held"), col(i+1, "saturated"); h != want.held || s != want.sat {
			t.Errorf("tick %d: held %q saturated %s, want %q %s", i+1, h, s, want.held, want.sat)
		}
	}
	if u := col(1, "unix_s"); u != "1000.250" {
		t.Errorf("unix_s %s, want 1000.250", u)
	}
}

// A value that is not a writable directory is refused with one line
// naming the variable; unset turns the trace off.
func TestTraceWatchFromEnv(t *testing.T) {
	t.Cleanup(func() { traceDir.Store(nil) })
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{file, filepath.Join(file, "missing")} {
		t.Setenv(WatchTraceEnv, bad)
		err := TraceWatchFromEnv()
		if err == nil || !strings.Contains(err.Error(), WatchTraceEnv) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %s", bad, err, WatchTraceEnv)
		}
	}
	t.Setenv(WatchTraceEnv, "")
	if err := TraceWatchFromEnv(); err != nil || openWatchTrace() != nil {
		t.Errorf("unset: %v, want the trace off", err)
	}
}

// The pressure column reads the "some" line's total of Linux's
// /proc/pressure/cpu.
func TestPSISomeTotal(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"some avg10=85.87 avg60=85.14 avg300=63.37 total=33935307828\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n": 33935307828 * time.Microsecond,
		"full avg10=0.00 total=5\n": -1,
		"some avg10=1.00\n":         -1,
		"":                          -1,
	} {
		if got := psiSomeTotal([]byte(in)); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}
