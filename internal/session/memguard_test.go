package session

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// An iteration that allocates without end is stopped once the heap passes
// THROTTLE_MEMORY: one line says so, the iteration cut off is named where
// it was, k6's summary is still written, and the run fails (exit 1).
func TestIterationMemoryBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grow.js")
	src := "export const options = { scenarios: { s: { executor: 'constant-vus', vus: 1, duration: '1m' } } };\n" +
		"export default function () {\n  const keep = [];\n  while (true) { keep.push(new Array(1024).fill(keep.length)); }\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(MemoryEnv, "96MiB")
	out, errb := &testwait.Buffer{}, &testwait.Buffer{}
	s := &Session{Stdout: out, Stderr: errb, Quiet: true}
	err := s.RunScript(Script{Path: path})
	var ec ExitCode
	if err == nil || errors.As(err, &ec) || IsBadInput(err) || !strings.Contains(err.Error(), "heap passed 96 MiB") {
		t.Fatalf("err %v: want a run failure (exit 1) naming the bound", err)
	}
	if !errb.Contains("the heap passed 96 MiB ("+MemoryEnv+"): the script allocates without bound", "grow.js:4") {
		t.Fatalf("stderr does not say so, or where:\n%s", errb.String())
	}
	if !out.Contains("TOTAL RESULTS", "vus") {
		t.Fatalf("no summary on stdout:\n%s", out.String())
	}
	t.Setenv(MemoryEnv, "lots")
	if err := s.RunScript(Script{Path: path}); !IsBadInput(err) || !strings.Contains(err.Error(), MemoryEnv) {
		t.Fatalf("err %v: want bad input naming %s", err, MemoryEnv)
	}
}

// Unset, the bound is 90 % of the machine's (or cgroup's) memory; 0 lifts it.
func TestMemoryLimitDefault(t *testing.T) {
	t.Setenv(MemoryEnv, "")
	n, err := memoryLimit()
	if err != nil || n <= 0 || n != script.MachineMemory()/10*9 {
		t.Fatalf("default %d (%v): want 90 %% of %d", n, err, script.MachineMemory())
	}
	t.Setenv(MemoryEnv, "0")
	if n, err := memoryLimit(); n != 0 || err != nil {
		t.Fatalf("0: %d, %v", n, err)
	}
}

// heldNow is what the runtime's soft memory limit counts now.
func heldNow() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// The guard and the soft memory limit agree: with the GC's goal off, so
// that only the run's limit makes it collect, garbage many times the
// bound never trips the guard; live data past the bound does. When the
// user tuned the GC (here GOGC=off, no limit) the heap objects past the
// bound trip it, as the GC may never run.
func TestMemoryGuardAgreesWithLimit(t *testing.T) {
	if script.UserTunedGC() {
		t.Fatal("GOGC or GOMEMLIMIT is set: the run's limit is the user's by design; run the tests without them")
	}
	runtime.GC()
	bound := heldNow() + 64<<20
	prevPercent := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prevPercent)
	var use memoryUse
	var sink []byte
	churn := func(until func() bool) bool { // garbage, 4x the bound at most
		for range 4 * bound >> 20 {
			sink = make([]byte, 1<<20)
			if until() {
				return true
			}
		}
		return false
	}
	unbind := script.BindMemory(bound, 1)
	if churn(func() bool { return use.overBound(bound, false) }) {
		unbind()
		o, k := use.read()
		t.Fatalf("garbage under the run's %d MiB limit tripped the guard: objects %d MiB, kept %d MiB, held %d MiB", bound>>20, o>>20, k>>20, heldNow()>>20)
	}
	kept := make([][]byte, bound>>20+1)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	over := use.overBound(bound, false)
	runtime.KeepAlive(kept)
	kept = nil
	unbind()
	if !over {
		t.Fatalf("%d MiB live past the %d MiB bound: the guard did not see it", bound>>20+1, bound>>20)
	}
	runtime.GC()
	bound = heldNow() + 64<<20
	if !churn(func() bool { return use.overBound(bound, true) }) {
		t.Fatalf("garbage past %d MiB with the user's GC off and no limit: the guard never saw the heap pass it", bound>>20)
	}
	_ = sink
}
