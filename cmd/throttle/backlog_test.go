package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/target"
)

// builtinConfig parses args as the built-in target's flags and returns the
// configuration they describe.
func builtinConfig(t *testing.T, concurrent bool, args ...string) (target.Config, error) {
	t.Helper()
	var b builtinFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	b.register(fs, "capacity")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return b.config(fs, concurrent)
}

// Of --capacity, --latency and --servers the backlog model takes any two.
func TestBacklogFlags(t *testing.T) {
	cases := []struct {
		args    []string
		servers float64
		latency time.Duration
		depth   int
	}{
		{nil, demoServers, target.DefaultLatency, target.DefaultBacklogDepth},
		{[]string{"--servers", "2", "--latency", "10ms"}, 2, 10 * time.Millisecond, target.DefaultBacklogDepth},
		{[]string{"--servers", "2", "--capacity", "200"}, 2, 10 * time.Millisecond, target.DefaultBacklogDepth},
		{[]string{"--capacity", "400", "--latency", "10ms"}, demoServers, 10 * time.Millisecond, target.DefaultBacklogDepth},
		{[]string{"--servers", "2", "--capacity", "200", "--latency", "10ms", "--queue-depth", "64"}, 2, 10 * time.Millisecond, 64},
	}
	for _, c := range cases {
		tc, err := builtinConfig(t, false, append([]string{"--model", "backlog"}, c.args...)...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if tc.Model != target.Backlog || !tc.Concurrent || tc.Capacity != c.servers || tc.Latency != c.latency || tc.QueueDepth != c.depth || tc.DropAbandoned {
			t.Errorf("%v: %+v", c.args, tc)
		}
	}
	tc, err := builtinConfig(t, false, "--model", "backlog", "--drop-abandoned")
	if err != nil || !tc.DropAbandoned {
		t.Errorf("--drop-abandoned: %+v, %v", tc, err)
	}
	tc, err = builtinConfig(t, false, "--model", "queue", "--queue-depth", "7")
	if err != nil || tc.QueueDepth != 7 {
		t.Errorf("queue --queue-depth 7: %+v, %v", tc, err)
	}
}

func TestBacklogFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--servers", "2"}, "--servers applies to --model backlog only"},
		{[]string{"demo", "--drop-abandoned"}, "--drop-abandoned applies to --model backlog only"},
		{[]string{"demo", "--queue-depth", "5"}, "--queue-depth applies to --model queue or backlog only"},
		{[]string{"demo", "--model", "backlog", "--queue-depth", "0"}, "--queue-depth must be > 0, got 0"},
		{[]string{"demo", "--model", "backlog", "--servers", "0"}, "--servers must be > 0, got 0"},
		{[]string{"demo", "--model", "backlog", "--capacity", "0"}, "capacity must be > 0"},
		{[]string{"demo", "--model", "backlog", "--latency", "0s"}, "needs a latency (service time) > 0"},
		{[]string{"demo", "--model", "backlog", "--servers", "2", "--capacity", "300", "--latency", "10ms"}, "--capacity 300 disagrees with --servers 2 / --latency 10ms = 200 req/s; give two of the three"},
		{[]string{"target", "--model", "backlog", "--concurrent"}, "--concurrent does not apply to --model backlog"},
	}
	for _, c := range cases {
		r := cli(t, "", nil, c.args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "throttle: ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want one line naming %q", c.args, r.code, r.stderr, c.want)
		}
	}
	for _, cmd := range []string{"demo", "target"} {
		r := cli(t, "", nil, cmd, "--help")
		for _, want := range []string{"backlog", "--servers", "--queue-depth", "--drop-abandoned"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s --help does not mention %s", cmd, want)
			}
		}
	}
}

// demo --model backlog compares what it found with servers / service time.
// Only the truth is asserted: the run is too short to settle.
func TestDemoBacklogTruth(t *testing.T) {
	r := cli(t, "", nil, "demo", "--model", "backlog", "--servers", "2", "--latency", "10ms", "--rate", "40",
		"--window", "200ms", "--tick", "50ms", "--duration", "600ms", "--quiet")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "true 200 req/s") && !strings.Contains(r.stdout, "the true capacity is 200 req/s") {
		t.Errorf("no truth of 200 req/s in:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "backlog target: capacity 200 req/s (2 servers × 10ms)") {
		t.Errorf("report does not describe the backlog target:\n%s", r.stdout)
	}
}
