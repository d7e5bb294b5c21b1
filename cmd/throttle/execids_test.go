package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// Over local agents, k6/execution's test-wide ids are the test's:
// exec.vu.idInTest and exec.scenario.iterationInTest are unique across
// the agents (k6 documents both as unique across a distributed test's
// instances), while idInInstance repeats from one agent to the other.
func TestExecIDsUniqueOverAgents(t *testing.T) {
	t.Setenv(asThrottle, "1")
	srv, _ := counting(t)
	path := writeFile(t, "ids.js", `import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 4, iterations: 3 } } };
export default function () {
  http.get(__ENV.BASE + '/');
  console.log('ids vu=' + exec.vu.idInTest + ' local=' + exec.vu.idInInstance + ' iter=' + exec.scenario.iterationInTest + ' viter=' + exec.vu.iterationInScenario);
}
`)
	var stdout, stderr testwait.Buffer
	code := run([]string{"run", "--quiet", "-e", "BASE=" + srv.URL, "--local-agents", "2", "--listen", "127.0.0.1:0", path},
		env{stdout: &stdout, stderr: &stderr})
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
	}
	line := regexp.MustCompile(`ids vu=(\d+) local=(\d+) iter=(\d+) viter=(\d+)`)
	vus, locals, iters := map[string]bool{}, map[string]int{}, map[string]bool{}
	vuIters := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(stderr.String(), -1) {
		vus[m[1]] = true
		locals[m[2]]++
		if iters[m[3]] {
			t.Errorf("iterationInTest %s twice", m[3])
		}
		iters[m[3]] = true
		if k := m[1] + "/" + m[4]; vuIters[k] {
			t.Errorf("VU %s's iteration %s twice: two agents' VUs share idInTest %s", m[1], m[4], m[1])
		} else {
			vuIters[k] = true
		}
	}
	if len(iters) != 12 || len(vus) != 4 {
		t.Fatalf("%d iterations by %d VUs (idInTest %v), want 12 by 4\nstderr: %s", len(iters), len(vus), vus, stderr.String())
	}
	// Each agent runs 2 of the 4 VUs: idInInstance 1 and 2 on each.
	if len(locals) != 2 || !strings.Contains(stderr.String(), "local=2") {
		t.Errorf("idInInstance counts %v, want 1 and 2 on each agent", locals)
	}
}
