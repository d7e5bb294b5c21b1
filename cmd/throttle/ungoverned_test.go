package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// An ungoverned script's live line says so, on one process and over
// local agents alike: no governor state (first window, at-ceiling, last
// bad, memory-cleared) where no governor decides.
func TestLiveUngovernedScript(t *testing.T) {
	t.Setenv(asThrottle, "1")
	srv, _ := counting(t)
	path := writeFile(t, "u.js", `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: { a: { executor: 'constant-vus', vus: 2, duration: '6s' } } };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.02); }
`)
	status := regexp.MustCompile(`(?m)^.*\d+\.\ds  offer .*$`)
	for name, extra := range map[string][]string{"one process": nil, "agents": {"--local-agents", "2", "--listen", "127.0.0.1:0"}} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr testwait.Buffer
			code := run(append(append([]string{"run", "-e", "BASE=" + srv.URL}, extra...), path), env{stdout: &stdout, stderr: &stderr})
			if code != 0 {
				t.Fatalf("exit %d\nstderr: %s", code, stderr.String())
			}
			lines := status.FindAllString(stderr.String(), -1)
			if len(lines) == 0 {
				t.Fatalf("no live line\nstderr: %s", stderr.String())
			}
			for _, l := range lines {
				if !strings.HasSuffix(l, "  [not governed]") {
					t.Errorf("live line %q, want it to end [not governed]", l)
				}
			}
		})
	}
}
