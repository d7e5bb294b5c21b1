package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/report"
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

func TestBodyLimitEnv(t *testing.T) {
	for v, want := range map[string]int64{"": 0, "1000": 1000, "256MiB": 256 << 20, "2 GiB": 2 << 30} {
		t.Setenv(BodyLimitEnv, v)
		if got, err := bodyLimit(); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"x", "-1", "0", "1.5MiB"} {
		t.Setenv(BodyLimitEnv, v)
		if _, err := bodyLimit(); err == nil || !strings.Contains(err.Error(), BodyLimitEnv) {
			t.Errorf("%q: %v, want a one-line refusal naming %s", v, err, BodyLimitEnv)
		}
	}
}

// A full disk at the end: every report file is tried; the first failure
// is the run's error, each later one is one line where "wrote" lines go.
func TestWriteFilesFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatal("no /dev/full: this test needs Linux")
	}
	s := &Session{Outputs: Outputs{JSON: "/dev/full", Timeline: "/dev/full"}}
	r, err := report.Build(report.Input{Settings: report.Settings{Limits: governor.NewLimits(governor.Rate, 100)}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = s.writeFiles(&out, r, r.SaveJSON)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || strings.Count(err.Error(), "writing /dev/full") != 1 {
		t.Fatalf("err %v: want the JSON's full disk, once", err)
	}
	if out.String() != "not written  writing /dev/full: write /dev/full: no space left on device\n" {
		t.Fatalf("out %q: want the timeline's failure, one line", out.String())
	}
}

// A run that closed no window has no chart: one line says so where the
// "wrote" lines go, and the run does not fail for it; the timeline (its
// header) is written.
func TestChartOfNoWindows(t *testing.T) {
	dir := t.TempDir()
	chart, timeline := filepath.Join(dir, "c.svg"), filepath.Join(dir, "t.csv")
	s := &Session{Outputs: Outputs{Chart: chart, Timeline: timeline}}
	r, err := report.Build(report.Input{Settings: report.Settings{Limits: governor.NewLimits(governor.Rate, 100), Governed: true}, Interrupted: true})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := s.writeFiles(&out, r, r.SaveJSON); err != nil {
		t.Fatalf("a chart of no windows failed the run: %v", err)
	}
	if want := "wrote        " + timeline + "\nnot written  " + chart + ": no window closed, nothing to chart\n"; out.String() != want {
		t.Fatalf("out %q, want %q", out.String(), want)
	}
	if _, err := os.Stat(chart); !os.IsNotExist(err) {
		t.Fatalf("a chart file was left: %v", err)
	}
}
