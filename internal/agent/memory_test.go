package agent

import (
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
)

// A controller's N local agents inherit its THROTTLE_MEMORY, the bound of
// the whole run on its machine: each takes an Nth and says so; a remote
// agent (colocated 0) takes its own whole; 0 is no bound.
func TestSegmentMemory(t *testing.T) {
	t.Setenv(script.MemoryEnv, "1GiB")
	cases := []struct {
		memory    int64
		colocated int
		limit     int64
		note      string
	}{
		{1 << 30, 0, 1 << 30, script.MemoryEnv},
		{1 << 30, 1, 1 << 30, script.MemoryEnv},
		{1 << 30, 4, 256 << 20, script.MemoryEnv + ", shared by 4 local agents"},
		{0, 4, 0, script.MemoryEnv},
	}
	for _, c := range cases {
		g := segmentMemory(c.memory, c.colocated)
		if g.Limit != c.limit || g.Note != c.note {
			t.Errorf("memory %d over %d agents: limit %d (%q), want %d (%q)", c.memory, c.colocated, g.Limit, g.Note, c.limit, c.note)
		}
	}
	if p := segmentMemory(1<<30, 4).Passed(); !strings.Contains(p, "passed 256 MiB ("+script.MemoryEnv+", shared by 4 local agents)") {
		t.Errorf("Passed %q", p)
	}
}
