package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/throttlekit/throttle/internal/testwait"
)

// asThrottle, set to 1 in its environment, makes the test binary run as
// the throttle command (TestMain calls main): a real process that the
// signal tests send real signals to.
const asThrottle = "THROTTLE_TEST_AS_MAIN"

// process is throttle running as a child process.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *testwait.Buffer
	exit           chan int
}

// startThrottle starts throttle with args as a child process; the test's
// cleanup kills it if it is still running.
func startThrottle(t *testing.T, args ...string) *process {
	t.Helper()
	return startThrottleEnv(t, nil, args...)
}

// startThrottleEnv is startThrottle with env added to its environment.
func startThrottleEnv(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{stdout: &testwait.Buffer{}, stderr: &testwait.Buffer{}, exit: make(chan int, 1)}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(append(os.Environ(), asThrottle+"=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			p.exit <- 0
		case errors.As(err, &ee):
			p.exit <- ee.ExitCode()
		default:
			p.exit <- -1
		}
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	return p
}

// waitFor waits for stderr to hold every one of subs, failing the test if
// the process exits first.
func (p *process) waitFor(t *testing.T, what string, subs ...string) {
	t.Helper()
	testwait.Until(t, testwait.Deadline, what, func() bool {
		select {
		case c := <-p.exit:
			t.Fatalf("exited %d while waiting for %s\nstdout: %s\nstderr: %s", c, what, p.stdout.String(), p.stderr.String())
		default:
		}
		return p.stderr.Contains(subs...)
	})
}

func (p *process) signal(t *testing.T, s os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}

func (p *process) exited(t *testing.T) int {
	t.Helper()
	return testwait.Receive(t, p.exit, "the process to exit")
}

// Ctrl-C (or SIGTERM) while setup, teardown or handleSummary loops
// forever: the process ends on that signal, cleanly — k6's summary on
// stdout with what the run gathered, one line naming what was cut short,
// the --out report written — and exits 105 (k6's code for a run aborted
// from outside).
func TestSignalDuringLifecycle(t *testing.T) {
	srv, _ := counting(t)
	for _, c := range []struct {
		stage string
		sig   os.Signal
		src   string
		want  []string // on stdout
	}{
		{"setup", os.Interrupt, `export function setup() { http.get(__ENV.BASE + '/setup'); console.log('entered setup'); while (true) {} }`,
			[]string{"http_reqs", ": 1 "}},
		{"teardown", syscall.SIGTERM, `export function teardown() { http.get(__ENV.BASE + '/teardown'); console.log('entered teardown'); while (true) {} }`,
			[]string{"http_reqs", ": 4 ", "iterations", ": 3 "}},
		{"handleSummary", os.Interrupt, `export function handleSummary(data) { console.log('entered handleSummary'); while (true) {} }`,
			[]string{"http_reqs", ": 3 "}},
	} {
		t.Run(c.stage, func(t *testing.T) {
			path := writeFile(t, c.stage+".js", `import http from 'k6/http';
import 'k6/x/throttle';
export const options = { iterations: 3 };
export default function () { http.get(__ENV.BASE + '/'); }
`+c.src+"\n")
			out := filepath.Join(t.TempDir(), "r.json")
			p := startThrottle(t, "run", "--quiet", "-e", "BASE="+srv.URL, "--out", out, path)
			p.waitFor(t, c.stage+" to run", "entered "+c.stage)
			p.signal(t, c.sig)
			code := p.exited(t)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			if code != 105 {
				t.Fatalf("exit %d, want 105\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, c.stage+"() interrupted by a signal") || !strings.Contains(stderr, "run interrupted by a signal during "+c.stage+"()") {
				t.Errorf("stderr does not name %s: %s", c.stage, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if m := readJSON(t, out); m["run"].(map[string]any)["interrupted"] != true {
				t.Errorf("report: run %v, want interrupted", m["run"])
			}
		})
	}
}

// A full disk at the end: the report cannot be written to /dev/full, yet
// the run's report is on stdout and the exit is not 0.
func TestFullDiskKeepsStdout(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	srv, _ := counting(t)
	r := cli(t, "", nil, "run", "--quiet", "--no-governor", "--rate", "20", "--duration", "300ms", "--out", "/dev/full", srv.URL)
	if r.code == 0 || !strings.Contains(r.stderr, "/dev/full") || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, stderr %q: want non-zero naming /dev/full and the full disk", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "verdict") || !strings.Contains(r.stdout, "not governed") {
		t.Fatalf("stdout lacks the report:\n%s", r.stdout)
	}
	path := writeFile(t, "s.js", "import http from 'k6/http';\nexport const options = { iterations: 2 };\nexport default function () { http.get(__ENV.BASE + '/'); }\n")
	r = cli(t, "", nil, "run", "--quiet", "-e", "BASE="+srv.URL, "--summary-export", "/dev/full", "--out", "json=/dev/full", path)
	if r.code == 0 || !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stdout, "http_reqs") {
		t.Fatalf("script: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
