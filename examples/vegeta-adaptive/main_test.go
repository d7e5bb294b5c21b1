package main

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/target"
)

// TestRunsAgainstALoopbackTarget runs the example's attack for 3 s against
// the built-in target on loopback and checks it reports what it says it does.
func TestRunsAgainstALoopbackTarget(t *testing.T) {
	tgt, err := target.New(target.NewConfig(100))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tgt)
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	err = run([]string{"-url", srv.URL, "-rate", "1000", "-start", "20", "-window", "250ms", "-duration", "3s"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"rate ", "Requests      [total, rate, throughput]", "capacity"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "signal=slow-start") {
		t.Errorf("stderr has no movement line:\n%s", stderr.String())
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
		{[]string{"-url", "127.0.0.1:8080"}, "not an http(s) URL"},
		{[]string{"-rate", "5", "-start", "10"}, "start (10) must be <= ceiling (5)"},
		{[]string{"-duration", "0s"}, "must be > 0"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(c.args, &stdout, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run(%q) = %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
}
