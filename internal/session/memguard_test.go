package session

import (
	"errors"
	"os"
	"path/filepath"
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
	n, err := MemoryLimit()
	if err != nil || n <= 0 || n != script.MachineMemory()/10*9 {
		t.Fatalf("default %d (%v): want 90 %% of %d", n, err, script.MachineMemory())
	}
	t.Setenv(MemoryEnv, "0")
	if n, err := MemoryLimit(); n != 0 || err != nil {
		t.Fatalf("0: %d, %v", n, err)
	}
}
