//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/throttlekit/throttle/internal/testwait"
)

// slackProbeEnv makes the test binary a probe of its own timer slack:
// "start" prints it; "reexec=D" first runs reexecWithTimerSlack(D) (the
// first image execs, the second returns) and prints it, then exits 3.
const slackProbeEnv = "THROTTLE_TEST_SLACK_PROBE"

// The probe runs before TestMain: its process is not a test run.
func init() {
	mode, ok := os.LookupEnv(slackProbeEnv)
	if !ok {
		return
	}
	code := 0
	if d, found := strings.CutPrefix(mode, "reexec="); found {
		slack, err := time.ParseDuration(d)
		if err != nil {
			panic(err)
		}
		if err := reexecWithTimerSlack(slack); err != nil {
			fmt.Println("reexec:", err)
			os.Exit(1)
		}
		_, marked := os.LookupEnv(reexecEnv)
		fmt.Printf("marker=%t ", marked)
		code = 3
	}
	fmt.Printf("pid=%d slack=%s\n", os.Getpid(), threadSlacks())
	os.Exit(code)
}

// threadSlacks is the timer slack of several of this process's threads,
// comma-separated: threads the runtime had and made (goroutines locked to
// their threads at once need as many), each read by itself (prctl), and
// when this process may read them (CAP_SYS_NICE) every thread's, sysmon's
// too, from /proc.
func threadSlacks() string {
	const n = 4
	vals := make([]string, n)
	var locked, done sync.WaitGroup
	locked.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			locked.Done()
			v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
			vals[i] = strconv.Itoa(v)
			if err != nil {
				vals[i] = err.Error()
			}
			<-release // hold the thread until every goroutine has its own
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
	if tasks, err := os.ReadDir("/proc/self/task"); err == nil {
		var fromProc []string
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns") // a thread's own entry: task/ has none
			if err != nil {
				fromProc = nil // not this process's to read (CAP_SYS_NICE)
				break
			}
			fromProc = append(fromProc, strings.TrimSpace(string(b)))
		}
		vals = append(vals, fromProc...)
	}
	return strings.Join(vals, ",")
}

// wantSlack fails t unless every value of a probe's line is d in ns.
func wantSlack(t *testing.T, line string, d time.Duration) {
	t.Helper()
	_, vals, ok := strings.Cut(strings.TrimSpace(line), "slack=")
	if !ok {
		t.Fatalf("no probe line in %q", line)
	}
	for v := range strings.SplitSeq(vals, ",") {
		if v != strconv.FormatInt(d.Nanoseconds(), 10) {
			t.Fatalf("a thread's slack is %s, want %d: %s", v, d.Nanoseconds(), line)
		}
	}
}

// The local agents a controller starts carry the timer slack on every
// thread, and the controller's thread that started them gets its own back.
func TestLocalAgentsTimerSlack(t *testing.T) {
	t.Setenv(slackProbeEnv, "start") // the agents run as the probe
	var stderr testwait.Buffer
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	const slack = 3 * time.Millisecond
	stop, err := spawnLocal(2, env{stderr: &stderr}, slack)("nats://127.0.0.1:1", "token")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if back, _ := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); back != own {
		t.Errorf("the starting thread's slack is %d after, was %d", back, own)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two agents' lines: %q", stderr.String())
	}
	for _, l := range lines {
		wantSlack(t, l, slack)
	}
}

// reexecWithTimerSlack runs the program again in the same process (the
// same pid, its exit code the parent's to see, its stdout the same) with
// the slack on every thread, once, and the marker out of its environment.
func TestReexecTimerSlack(t *testing.T) {
	const slack = 2 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), slackProbeEnv+"=reexec="+slack.String())
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3 (the second image's)\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	if strings.Count(line, "pid=") != 1 || !strings.HasPrefix(line, fmt.Sprintf("marker=false pid=%d ", cmd.Process.Pid)) {
		t.Fatalf("want one line from pid %d with the marker gone: %q", cmd.Process.Pid, line)
	}
	wantSlack(t, line, slack)
}

// A script run on this machine runs in the process main re-execs: the
// marker is in the environment the process was started with, never in the
// script's __ENV; signals reach it (exit 105). THROTTLE_TIMERSLACK=0 does
// not re-exec.
func TestScriptRunReexecs(t *testing.T) {
	path := writeFile(t, "s.js", `import { sleep } from 'k6';
export const options = { iterations: 1 };
export function setup() { console.log('ready ' + __ENV.`+reexecEnv+`); sleep(60); }
export default function () {}
`)
	for _, c := range []struct {
		slack  string
		execed bool
	}{{"", true}, {"0", false}} {
		p := startThrottleEnv(t, []string{timerSlackEnv + "=" + c.slack}, "run", "--quiet", path)
		p.waitFor(t, "setup", "ready undefined")
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(environ), "\x00"+reexecEnv+"=1\x00"); got != c.execed {
			t.Errorf("%s=%q: re-executed %t, want %t", timerSlackEnv, c.slack, got, c.execed)
		}
		p.signal(t, syscall.SIGTERM)
		if code := p.exited(t); code != 105 {
			t.Errorf("exit %d after SIGTERM, want 105\nstderr: %s", code, p.stderr.String())
		}
	}
}
