package main

import (
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A script that allocates without bound on local agents under a small
// THROTTLE_MEMORY: each of the 2 agents (real child processes) is bound
// to half of it, stops its segment once past, and sends what it has; the
// run ends with exit 1 and one line naming the agent and the bound, not
// with the kernel's OOM killer and an agent "lost".
func TestLocalAgentsMemoryBound(t *testing.T) {
	if script.UserTunedGC() {
		t.Fatal("GOGC or GOMEMLIMIT is set: the agents' limit is the user's by design; run the tests without them")
	}
	t.Setenv(asThrottle, "1")
	t.Setenv(script.MemoryEnv, "128MiB")
	path := writeFile(t, "grow.js", `export const options = { scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '30s' } } };
export default function () {
  const keep = [];
  while (true) { keep.push(new Array(1024).fill(keep.length)); }
}
`)
	var stdout, stderr testwait.Buffer
	code := run([]string{"run", "--local-agents", "2", "--listen", "127.0.0.1:0", path}, env{stdout: &stdout, stderr: &stderr})
	errs := stderr.String()
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr: %s", code, errs)
	}
	bound := "the heap passed 64 MiB (" + script.MemoryEnv + ", shared by 2 local agents): the script allocates without bound"
	last := errs[strings.LastIndex(strings.TrimSpace(errs), "\n")+1:]
	if !strings.HasPrefix(last, "throttle: agent local-") || !strings.Contains(last, bound) || !strings.Contains(last, "its segment was stopped") {
		t.Fatalf("the run's last line %q does not name the agent and its bound\nstderr: %s", last, errs)
	}
	if strings.Contains(errs, "was lost") || !strings.Contains(errs, "the agent's segment is stopped") {
		t.Fatalf("want the agents' own lines, no agent lost\nstderr: %s", errs)
	}
	if !stdout.Contains("TOTAL RESULTS") {
		t.Fatalf("no summary of what the agents sent:\n%s", stdout.String())
	}
}

// A bad THROTTLE_MEMORY is refused with one line at an agent's start, and
// by a controller before it starts local agents that would read it.
func TestAgentMemoryInvalid(t *testing.T) {
	t.Setenv(script.MemoryEnv, "lots")
	for _, args := range [][]string{
		{"agent", "--join", "nats://127.0.0.1:1", "--token", "tok", "--wait", "1ms"},
		{"run", "--rate", "10", "--local-agents", "2", "--listen", "127.0.0.1:0", "http://127.0.0.1:1/"},
	} {
		r := cli(t, "", nil, args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, script.MemoryEnv+`="lots": want a size`) {
			t.Errorf("%v: exit %d, stderr %q: want exit 2 and one line naming %s", args, r.code, r.stderr, script.MemoryEnv)
		}
	}
}
