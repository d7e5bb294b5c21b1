package phase

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"
)

// WatchTraceEnv names a directory in which every phase of this process
// writes its watch's ticks, one CSV line per tick (watch-PID-N.csv, N the
// phase's number in the process): what each rule read and which held,
// beside the GC's cycles and the bytes allocated so far. It is a
// diagnostic for saturated runs: the report sums the ticks, the trace
// says when each was marked and why, so a tick can be set beside the
// GC's trace (GODEBUG=gctrace=1) or the machine's. Local agents inherit
// it, each writing its own files; the unix time in every line puts them
// on one clock.
const WatchTraceEnv = "THROTTLE_WATCH_TRACE"

// traceDir is the directory phases trace their watch to ("" none), set
// once by TraceWatchFromEnv; traceSeq numbers the process's phases.
var (
	traceDir atomic.Pointer[string]
	traceSeq atomic.Int64
)

// TraceWatchFromEnv turns the watch trace on when WatchTraceEnv is set:
// an error names a value that is not a writable directory, so a run is
// refused before it starts rather than losing its trace.
func TraceWatchFromEnv() error {
	dir := os.Getenv(WatchTraceEnv)
	if dir == "" {
		traceDir.Store(nil)
		return nil
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("not a directory")
	}
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(dir, ".watch-probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("%s=%q: want a writable directory: %v", WatchTraceEnv, dir, err)
	}
	traceDir.Store(&dir)
	return nil
}

// watchTrace writes one phase's ticks. Its writes happen on the watch
// loop alone; a write error ends the trace (the run goes on: the trace is
// a diagnostic), and close reports it.
type watchTrace struct {
	f   *os.File
	w   *bufio.Writer
	err error
	rt  [2]metrics.Sample // GC cycles and bytes allocated so far
	buf []byte
	// psi is the machine's CPU pressure (/proc/pressure/cpu, Linux 4.20+;
	// nil without it): the time some task waited for a core, beside the
	// busy cores the cpu rule reads, in psiPrev at the tick before.
	psi     *os.File
	psiBuf  [256]byte
	psiPrev time.Duration
	psiAt   time.Time
}

// openWatchTrace opens this phase's trace file, or returns nil when the
// trace is off or the file cannot be made (said once on stderr: a run
// does not fail for its diagnostic).
func openWatchTrace() *watchTrace {
	dir := traceDir.Load()
	if dir == nil {
		return nil
	}
	name := filepath.Join(*dir, fmt.Sprintf("watch-%d-%d.csv", os.Getpid(), traceSeq.Add(1)))
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "throttle: %s: %v\n", WatchTraceEnv, err)
		return nil
	}
	t := &watchTrace{f: f, w: bufio.NewWriter(f)}
	t.rt[0].Name = "/gc/cycles/total:gc-cycles"
	t.rt[1].Name = "/gc/heap/allocs:bytes"
	if f, err := os.Open("/proc/pressure/cpu"); err == nil {
		t.psi = f
	}
	t.w.WriteString("unix_s,rate,cpu,machine,wait_p99_ms,wait_mean_ms,wait_samples,runnable,read_ms,read_answers,lag_ms,busy,dropped,held,saturated,gc_cycles,alloc_mb,cpu_pressure\n")
	return t
}

// tick writes st, the tick that ended at at.
func (t *watchTrace) tick(at time.Time, st GeneratorStatus) {
	if t == nil || t.err != nil {
		return
	}
	metrics.Read(t.rt[:])
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b := t.buf[:0]
	b = strconv.AppendFloat(b, float64(at.UnixNano())/1e9, 'f', 3, 64)
	for _, v := range []float64{st.Rate, st.CPU, st.Machine, ms(st.Wait), ms(st.WaitMean)} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'f', 3, 64)
	}
	b = append(b, ',')
	b = strconv.AppendUint(b, st.WaitSamples, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, st.Runnable, 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, ms(st.ReadDelay), 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendUint(b, st.ReadAnswers, 10)
	for _, v := range []float64{ms(st.Lag), st.Busy, st.Dropped} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'f', 3, 64)
	}
	b = append(b, ',')
	b = append(b, st.Held...)
	b = append(b, ',')
	b = strconv.AppendBool(b, st.Saturated)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64Of(t.rt[0].Value), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(uint64Of(t.rt[1].Value))/(1<<20), 'f', 1, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, t.pressure(at), 'f', 3, 64)
	b = append(b, '\n')
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
	}
}

// pressure is the share of the wall time since the last tick in which
// some task on the machine waited for a core (-1 unknown, or the first
// tick).
func (t *watchTrace) pressure(at time.Time) float64 {
	if t.psi == nil {
		return -1
	}
	n, err := t.psi.ReadAt(t.psiBuf[:], 0)
	if n == 0 {
		return -1
	}
	_ = err // io.EOF: the file is shorter than the buffer
	total := psiSomeTotal(t.psiBuf[:n])
	if total < 0 {
		return -1
	}
	prev, prevAt := t.psiPrev, t.psiAt
	t.psiPrev, t.psiAt = total, at
	if prevAt.IsZero() || !at.After(prevAt) {
		return -1
	}
	return float64(total-prev) / float64(at.Sub(prevAt))
}

// psiSomeTotal is the "some" line's total (µs in the file) of a pressure
// file's contents; < 0 when it has none.
func psiSomeTotal(b []byte) time.Duration {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("some ")) {
		return -1
	}
	_, v, ok := bytes.Cut(line, []byte("total="))
	if !ok {
		return -1
	}
	us, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil {
		return -1
	}
	return time.Duration(us) * time.Microsecond
}

// close flushes and closes the trace, saying on stderr if it was cut
// short.
func (t *watchTrace) close() {
	if t == nil {
		return
	}
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	if t.psi != nil {
		t.psi.Close()
	}
	if err := t.f.Close(); err != nil && t.err == nil {
		t.err = err
	}
	if t.err != nil {
		fmt.Fprintf(os.Stderr, "throttle: %s: %s: %v\n", WatchTraceEnv, t.f.Name(), t.err)
	}
}

func uint64Of(v metrics.Value) uint64 {
	if v.Kind() != metrics.KindUint64 {
		return 0
	}
	return v.Uint64()
}
