package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// fasthttp's idle-connection cleaner outlives a run by design (the
// engine's clients end it at their next idle check).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}

// Output paths are refused before the run, each naming its flag in one
// line, as bad input.
func TestOutputsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out  Outputs
		want string
	}{
		{Outputs{JSON: file, Timeline: filepath.Join(dir, "t.csv"), Chart: filepath.Join(dir, "c.svg")}, ""},
		{Outputs{Chart: filepath.Join(dir, "c.pdf")}, "--chart " + filepath.Join(dir, "c.pdf") + ": want a .svg, .png or .html file"},
		{Outputs{JSON: filepath.Join(dir, "no", "r.json")}, "--out " + filepath.Join(dir, "no", "r.json") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{Outputs{Timeline: dir}, "--timeline " + dir + " is a directory"},
	} {
		err := c.out.Check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.out, err)
		case c.want != "" && (err == nil || err.Error() != c.want || !IsBadInput(err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%+v: %v, want bad input %q", c.out, err, c.want)
		}
	}
}

// Bad input is recognised however it is wrapped; a run's failure is not.
func TestIsBadInput(t *testing.T) {
	if !IsBadInput(fmt.Errorf("x: %w", BadInput{errors.New("y")})) || !IsBadInput(fmt.Errorf("x: %w", Fieldf("--a", "b"))) {
		t.Error("wrapped bad input not recognised")
	}
	if IsBadInput(errors.New("connection refused")) || IsBadInput(ThresholdsCrossed(2)) {
		t.Error("a runtime failure taken for bad input")
	}
	if got := ThresholdsCrossed(2).Error(); got != "2 threshold(s) crossed" {
		t.Errorf("%q", got)
	}
}
