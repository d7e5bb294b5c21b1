package main

import (
	"slices"
	"testing"
)

// A local agent's environment: the token always; GOMAXPROCS of its share
// of the cores, rounded up, unless the user set one (an empty value is Go's
// unset); the caller's slice is not written through.
func TestLocalAgentEnv(t *testing.T) {
	base := []string{"A=1", "B=2"}
	for _, c := range []struct {
		environ  []string
		n, procs int
		want     string // the GOMAXPROCS entry added, "" for none
	}{
		{base, 7, 2, "GOMAXPROCS=1"},
		{base, 1, 2, "GOMAXPROCS=2"},
		{base, 3, 8, "GOMAXPROCS=3"},
		{base, 4, 8, "GOMAXPROCS=2"},
		{base, 2, 1, "GOMAXPROCS=1"},
		{append(slices.Clone(base), "GOMAXPROCS=4"), 7, 2, ""},
		{append(slices.Clone(base), "GOMAXPROCS="), 7, 2, "GOMAXPROCS=1"},
		{base, 0, 2, ""},
	} {
		environ := slices.Clip(slices.Clone(c.environ))
		got := localAgentEnv(environ, "THROTTLE_TOKEN=t", c.n, c.procs)
		want := append(slices.Clone(c.environ), "THROTTLE_TOKEN=t")
		if c.want != "" {
			want = append(want, c.want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("localAgentEnv(%q, n=%d, procs=%d) = %q, want %q", c.environ, c.n, c.procs, got, want)
		}
		if !slices.Equal(environ, c.environ) {
			t.Errorf("the caller's environment changed: %q", environ)
		}
	}
}
