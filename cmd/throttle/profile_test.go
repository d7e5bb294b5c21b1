//go:build unix

package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// isProfile reports whether the file holds a pprof profile (gzipped
// protobuf, as go tool pprof reads it).
func isProfile(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return false
	}
	body, err := io.ReadAll(z)
	return err == nil && len(body) > 0
}

func TestProfilesWrittenAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	cpu, heap := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "heap.pprof")
	t.Setenv(cpuProfileEnv, cpu)
	t.Setenv(heapProfileEnv, heap)
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, env{stdout: &out, stderr: &errb}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !isProfile(t, cpu) || !isProfile(t, heap) {
		t.Fatalf("profiles not written as pprof files; stderr: %s", errb.String())
	}
	if !strings.Contains(errb.String(), "memstats     heap in use") || !strings.Contains(errb.String(), "wrote        "+heap) {
		t.Fatalf("stderr does not say what the heap held: %q", errb.String())
	}
}

func TestHeapProfileOnSignal(t *testing.T) {
	heap := filepath.Join(t.TempDir(), "heap.pprof")
	t.Setenv(heapProfileEnv, heap)
	var errb testwait.Buffer
	stop, err := startProfiles(&errb)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, testwait.Deadline, "the heap profile written on SIGUSR1", func() bool { return errb.Contains("wrote        " + heap) })
	if !isProfile(t, heap) {
		t.Fatal("not a pprof file")
	}
}

func TestProfileBadPath(t *testing.T) {
	t.Setenv(heapProfileEnv, filepath.Join(t.TempDir(), "no-such-dir", "heap.pprof"))
	var out, errb bytes.Buffer
	code := run([]string{"version"}, env{stdout: &out, stderr: &errb})
	if code != 2 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "throttle: THROTTLE_HEAPPROFILE: ") {
		t.Fatalf("exit %d, stderr %q: want exit 2 and one line naming the variable", code, errb.String())
	}
	if out.Len() != 0 {
		t.Fatalf("the command ran: %q", out.String())
	}
}
