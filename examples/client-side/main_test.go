package main

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/testwait"
)

// TestRunsAgainstALoopbackTarget runs the example against the built-in target
// on loopback until it has shown what it says it does: a status line a
// second, and a movement line from the governor (slow start, as the target
// has room to spare). It waits for those lines, not for a duration: the run
// is stopped as soon as both are there, and -duration only bounds it.
//
// -start 100 with 250 ms windows offers 25 attempts a window where a window
// needs 20 within four windows, so the first decision comes even at a quarter
// of the pace on a loaded machine (at -start 20 one late timer in twenty
// already made it a no-evidence hold, and no line ever came).
func TestRunsAgainstALoopbackTarget(t *testing.T) {
	tgt, err := target.New(target.NewConfig(1000))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tgt)
	t.Cleanup(srv.Close)
	var stdout, stderr testwait.Buffer
	stop := testwait.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{"-url", srv.URL, "-rate", "1000", "-start", "100", "-window", "250ms",
			"-duration", (2 * testwait.Deadline).String(), "-workers", "8"}, &stdout, &stderr)
	})
	took := testwait.Until(t, testwait.Deadline, "a status line and a movement line", func() bool {
		return stdout.Contains("  1s offer") && stderr.Contains("signal=slow-start")
	})
	t.Logf("both lines after %v", took)
	if err := stop(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"done: ", "capacity"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if st := tgt.Stats(); st.Arrivals == 0 {
		t.Error("the target saw no requests")
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-url", "ftp://127.0.0.1/"}, "not an http(s) URL"},
		{[]string{"-rate", "0"}, "ceiling must be > 0"},
		{[]string{"-workers", "0"}, "must be > 0"},
		{[]string{"-nonsense"}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}
