package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startupScript is a 30 s script that says where its startup is: the
// setup VU's init context, then every VU's (made before setup(), as k6
// does; the setup VU's and VU 1's are busy for a while, so that a signal
// lands in them), setup(), each VU's first iteration.
const startupScript = `import http from 'k6/http';
import { sleep } from 'k6';
if (__VU === 0) {
  console.log('setup VU init');
  const t0 = Date.now();
  while (Date.now() - t0 < 2000) {}
} else {
  console.log('VU init ' + __VU);
  if (__VU === 1) { const t0 = Date.now(); while (Date.now() - t0 < 2000) {} }
}
export const options = { scenarios: { s: EXECUTOR } };
export function setup() { console.log('in setup'); }
let first = true;
export default function () {
  if (first) { first = false; console.log('first iteration'); }
  http.get(__ENV.BASE + '/');
  sleep(0.01);
}
`

// A Ctrl-C at any point of a script run's startup — the init context,
// setup, a VU's init, the first iteration, or (over local agents) the
// wait for the agents — ends the 30 s run at once with k6's 105: an
// interrupt loses nothing. Each case waits for the line that marks its
// point before it signals.
func TestInterruptDuringStartup(t *testing.T) {
	srv, _ := counting(t)
	executors := map[string]string{
		"constant-vus": `{ executor: 'constant-vus', vus: 2, duration: '30s' }`,
		"arrival-rate": `{ executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '30s', preAllocatedVUs: 2 }`,
	}
	for _, c := range []struct {
		name, executor, at string
		agents             bool
		report             bool // the --out report is written (something ran: not before setup())
	}{
		{"init", "constant-vus", "setup VU init", false, false},
		{"setup", "constant-vus", "in setup", false, true},
		{"vu-init", "constant-vus", "VU init 1", false, false},
		{"first-iteration", "constant-vus", "first iteration", false, true},
		{"arrival-rate-vu-init", "arrival-rate", "VU init 1", false, false},
		{"arrival-rate-first-iteration", "arrival-rate", "first iteration", false, true},
		{"agents-waiting", "constant-vus", "waiting for 2 agent(s)", true, false},
		{"agents-first-iteration", "constant-vus", "first iteration", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "s.js", strings.Replace(startupScript, "EXECUTOR", executors[c.executor], 1))
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "--quiet", "-e", "BASE=" + srv.URL, "--out", out}
			if c.agents {
				args = append(args, "--local-agents", "2", "--listen", "127.0.0.1:0")
			}
			p := startThrottle(t, append(args, path)...)
			p.waitFor(t, c.at, c.at)
			p.signal(t, os.Interrupt)
			code := p.exited(t)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			if code != 105 || !strings.Contains(stderr, "interrupted") {
				t.Fatalf("exit %d, want 105 naming the interruption\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if strings.Contains(stderr, "context canceled") {
				t.Errorf("stderr has Go's context error, not the run's words:\n%s", stderr)
			}
			if !c.report {
				return
			}
			if m := readJSON(t, out); m["run"].(map[string]any)["interrupted"] != true {
				t.Errorf("report: run %v, want interrupted", m["run"])
			}
		})
	}
}
