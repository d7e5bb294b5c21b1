package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
)

// A local agent's environment: the token always; its GC turn i/n when
// two or more share the machine unless the controller's environment says
// off (the controller's own value never passed on: unset, off or on); GOMAXPROCS of its share of
// the cores, rounded up, unless the user set one (an empty value is Go's
// unset); the caller's slice is not written through.
func TestLocalAgentEnv(t *testing.T) {
	base := []string{"A=1", "B=2"}
	on := append(slices.Clone(base), "THROTTLE_GC_TURN=on")
	for _, c := range []struct {
		environ  []string
		i, n     int
		procs    int
		want     []string // the entries after the caller's (less a replaced turn)
		replaced bool     // the caller's THROTTLE_GC_TURN entry is dropped
	}{
		{environ: base, i: 0, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=0/7", "GOMAXPROCS=1"}},
		{environ: on, i: 0, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=0/7", "GOMAXPROCS=1"}, replaced: true},
		{environ: on, i: 6, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=6/7", "GOMAXPROCS=1"}, replaced: true},
		{environ: on, i: 0, n: 1, procs: 2, want: []string{"GOMAXPROCS=2"}, replaced: true},
		{environ: on, i: 2, n: 3, procs: 8, want: []string{"THROTTLE_GC_TURN=2/3", "GOMAXPROCS=3"}, replaced: true},
		{environ: on, i: 1, n: 4, procs: 8, want: []string{"THROTTLE_GC_TURN=1/4", "GOMAXPROCS=2"}, replaced: true},
		{environ: on, i: 1, n: 2, procs: 1, want: []string{"THROTTLE_GC_TURN=1/2", "GOMAXPROCS=1"}, replaced: true},
		{environ: append(slices.Clone(base), "GOMAXPROCS=4"), i: 0, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=0/7"}},
		{environ: append(slices.Clone(base), "GOMAXPROCS="), i: 0, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=0/7", "GOMAXPROCS=1"}},
		{environ: base, i: 0, n: 0, procs: 2},
		{environ: append(slices.Clone(base), "THROTTLE_GC_TURN=off"), i: 3, n: 7, procs: 2, want: []string{"GOMAXPROCS=1"}, replaced: true},
		{environ: append(slices.Clone(base), "THROTTLE_GC_TURN="), i: 3, n: 7, procs: 2, want: []string{"THROTTLE_GC_TURN=3/7", "GOMAXPROCS=1"}, replaced: true},
	} {
		environ := slices.Clip(slices.Clone(c.environ))
		got := localAgentEnv(environ, "THROTTLE_TOKEN=t", c.i, c.n, c.procs)
		kept := slices.Clone(c.environ)
		if c.replaced {
			kept = kept[:len(kept)-1]
		}
		want := append(append(kept, "THROTTLE_TOKEN=t"), c.want...)
		if !slices.Equal(got, want) {
			t.Errorf("localAgentEnv(%q, i=%d, n=%d, procs=%d) = %q, want %q", c.environ, c.i, c.n, c.procs, got, want)
		}
		if !slices.Equal(environ, c.environ) {
			t.Errorf("the caller's environment changed: %q", environ)
		}
	}
}

// A bad THROTTLE_GC_TURN is refused with one line at an agent's start;
// a controller of local agents, which gives each its own unless off, refuses
// any but on and off.
func TestGCTurnInvalid(t *testing.T) {
	for _, c := range []struct {
		value, want string
		args        []string
	}{
		{"7/7", "want I/N", []string{"agent", "--join", "nats://127.0.0.1:1", "--token", "tok", "--wait", "1ms"}},
		{"1/2", "on (the default) gives each agent its GC turn", []string{"run", "--rate", "10", "--local-agents", "2", "--listen", "127.0.0.1:0", "http://127.0.0.1:1/"}},
	} {
		t.Setenv(script.GCTurnEnv, c.value)
		r := cli(t, "", nil, c.args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, script.GCTurnEnv+`="`+c.value+`"`) || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and one line naming %s", c.args, r.code, r.stderr, script.GCTurnEnv)
		}
	}
}

// Each local agent writes the profiles the controller was asked for to
// a path of its own: the controller's with ".local-N" added, N its name.
func TestLocalAgentEnvProfiles(t *testing.T) {
	environ := []string{"A=1", "THROTTLE_CPUPROFILE=/p/cpu.pprof", "THROTTLE_HEAPPROFILE=/p/heap.pprof", "B=THROTTLE_HEAPPROFILE=x"}
	got := localAgentEnv(environ, "THROTTLE_TOKEN=t", 2, 7, 2)
	want := []string{"A=1", "THROTTLE_CPUPROFILE=/p/cpu.pprof.local-3", "THROTTLE_HEAPPROFILE=/p/heap.pprof.local-3", "B=THROTTLE_HEAPPROFILE=x", "THROTTLE_TOKEN=t", "THROTTLE_GC_TURN=2/7", "GOMAXPROCS=1"}
	if !slices.Equal(got, want) {
		t.Errorf("localAgentEnv = %q, want %q", got, want)
	}
	if environ[1] != "THROTTLE_CPUPROFILE=/p/cpu.pprof" {
		t.Errorf("the caller's environment changed: %q", environ)
	}
	// unset or empty: nothing to write, nothing added
	got = localAgentEnv([]string{"THROTTLE_HEAPPROFILE="}, "THROTTLE_TOKEN=t", 0, 2, 2)
	if want := []string{"THROTTLE_HEAPPROFILE=", "THROTTLE_TOKEN=t", "THROTTLE_GC_TURN=0/2", "GOMAXPROCS=1"}; !slices.Equal(got, want) {
		t.Errorf("localAgentEnv = %q, want %q", got, want)
	}
}
