//go:build agents

// The agents suite runs real agent processes (make agents): about 15 s,
// too long for make test.

package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/throttlekit/throttle/internal/agent"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/testwait"
)

// children are this process's child processes.
func children(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// Three local agent processes against a shedding target: one is killed
// with SIGKILL mid-run; the controller declares it lost in one line, the
// run goes on on the other two, and the report (text and JSON) lists it.
func TestLocalAgentsSurviveSIGKILL(t *testing.T) {
	t.Setenv(asThrottle, "1")
	const capacity = 400.0
	tg, err := target.New(target.NewConfig(capacity))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tg)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr testwait.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"run", "--rate", "3000", "--start", "50", "--local-agents", "3", "--listen", "127.0.0.1:0",
			"--window", "500ms", "--tick", "100ms", "-d", "15s", "--out", out, srv.URL + "/"},
			env{stdout: &stdout, stderr: &stderr})
	}()
	testwait.Until(t, testwait.Deadline, "three agents and a back-off", func() bool {
		return len(children(t)) == 3 && stderr.Contains("signal=back-off")
	})
	victim := children(t)[0]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := testwait.Receive(t, done, "the run's end")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if n := strings.Count(stderr.String(), "throttle agent lost"); n != 1 {
		t.Fatalf("%d lost lines:\n%s", n, stderr.String())
	}
	if !strings.Contains(stdout.String(), "lost") {
		t.Fatalf("the report does not list the lost agent:\n%s", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		report.Report
		Agents []agent.AgentInfo `json:"agents"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	lost, after := 0, 0
	for _, a := range r.Agents {
		if a.Lost {
			lost++
		} else if a.Attempts > 0 {
			after++
		}
	}
	if len(r.Agents) != 3 || lost != 1 || after != 2 {
		t.Fatalf("agents %+v", r.Agents)
	}
	// Each agent runs with its third of this process's cores (localAgentEnv).
	if os.Getenv("GOMAXPROCS") == "" {
		for _, a := range r.Agents {
			if want := (runtime.GOMAXPROCS(0) + 2) / 3; a.Cores != want {
				t.Errorf("agent %s has %d cores, want %d", a.ID, a.Cores, want)
			}
		}
	}
	t.Logf("capacity %+v\n%s", r.Capacity, stdout.String())
	if g := r.Capacity.GoodputPerS; g < 0.3*capacity || g > 1.08*capacity {
		t.Errorf("goodput %.1f after losing an agent, want in [%.0f, %.0f]", g, 0.3*capacity, 1.08*capacity)
	}
}

// An ungoverned k6 script on three local agent processes makes the same
// iteration total, checks and requests as on one process: the agents run
// its segments from the shipped archive (a local module and an open()ed
// file in it), the controller merges their k6 metrics.
func TestLocalAgentsScriptSameTotals(t *testing.T) {
	t.Setenv(asThrottle, "1")
	_, base := openTarget(t)
	dir := t.TempDir()
	for name, src := range map[string]string{
		"main.js": `
import http from 'k6/http';
import { check } from 'k6';
import { pathOf } from './lib.js';
const names = JSON.parse(open('./names.json'));
export const options = { scenarios: {
  si: { executor: 'shared-iterations', vus: 4, iterations: 50 },
  pv: { executor: 'per-vu-iterations', vus: 5, iterations: 3 },
} };
export default function () { check(http.get(__ENV.BASE + pathOf(names[0])), { ok: (r) => r.status === 200 }); }
`,
		"lib.js":     `export function pathOf(n) { return '/' + n; }`,
		"names.json": `["x"]`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(args ...string) (iterations, checks float64) {
		out := filepath.Join(t.TempDir(), "sum.json")
		var stdout, stderr testwait.Buffer
		code := run(append(append([]string{"run", "-q", "-e", "BASE=" + base, "--summary-export", out}, args...), filepath.Join(dir, "main.js")),
			env{stdout: &stdout, stderr: &stderr})
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Metrics map[string]map[string]float64 `json:"metrics"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s.Metrics["iterations"]["count"], s.Metrics["checks"]["passes"]
	}
	oneI, oneC := counts()
	agentsI, agentsC := counts("--local-agents", "3", "--listen", "127.0.0.1:0")
	if oneI != 65 || agentsI != oneI || agentsC != oneC {
		t.Fatalf("one process: %v iterations, %v checks; three agents: %v, %v; want 65 each", oneI, oneC, agentsI, agentsC)
	}
}

// A k6 script's agent killed with SIGKILL mid-run: the controller declares
// it lost in one line, the others run their segments to the end, and the
// run ends with one line naming the lost agent's segment (exit 1), after
// k6's summary of what the agents sent.
func TestLocalAgentsScriptLost(t *testing.T) {
	t.Setenv(asThrottle, "1")
	tg, base := openTarget(t)
	path := filepath.Join(t.TempDir(), "s.js")
	if err := os.WriteFile(path, []byte(`
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 3, duration: '12s' };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.05); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testwait.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"run", "-e", "BASE=" + base, "--local-agents", "3", "--listen", "127.0.0.1:0", path},
			env{stdout: &stdout, stderr: &stderr})
	}()
	testwait.Until(t, testwait.Deadline, "three agents and requests", func() bool {
		return len(children(t)) == 3 && tg.Stats().OK > 30
	})
	if err := syscall.Kill(children(t)[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := testwait.Receive(t, done, "the run's end")
	if code != 1 || strings.Count(stderr.String(), "throttle agent lost") != 1 || !strings.Contains(stderr.String(), "was lost: its segment") ||
		!strings.Contains(stdout.String(), "http_reqs") {
		t.Fatalf("exit %d, want 1 with one lost line and the summary\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
}
