package report

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A path that is not a regular file (here a pipe; /dev/stdout or /dev/full
// in use) is written in place, never replaced by a renamed file.
func TestWriteFileAtomicLeavesDevicesInPlace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := WriteFileAtomic(fifo, []byte("summary")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "summary" {
		t.Fatalf("the reader got %q", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", st.Mode(), err)
	}
	// A regular file is replaced whole.
	file := filepath.Join(t.TempDir(), "s.json")
	if err := WriteFileAtomic(file, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "one" {
		t.Fatalf("file holds %q", b)
	}
}
