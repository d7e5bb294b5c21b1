package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A place no file can be created in (sysfs refuses even root) is refused
// before the run with one line naming the flag; a writable folder passes
// and is left as it was.
func TestCheckPathsWritable(t *testing.T) {
	err := CheckPaths(map[string]string{"--out": "/sys/report.json"})
	if err == nil || !strings.Contains(err.Error(), "--out") || !strings.Contains(err.Error(), "cannot write in /sys") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("read-only place: %v", err)
	}
	dir := t.TempDir()
	if err := CheckPaths(map[string]string{"--timeline": filepath.Join(dir, "t.csv")}); err != nil {
		t.Fatalf("writable folder: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("the check left %d files behind", len(left))
	}
}
