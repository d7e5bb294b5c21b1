//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nofileEnv, in a throttle child's environment (asThrottle), sets its
// open-file limit, soft and hard, before it runs: a machine whose hard
// limit is that low (lowering needs no privilege).
const nofileEnv = "THROTTLE_TEST_NOFILE"

func init() {
	n, err := strconv.ParseUint(os.Getenv(nofileEnv), 10, 64)
	if os.Getenv(asThrottle) != "1" || err != nil {
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		panic(err)
	}
}

// A script whose VUs would each keep a keep-alive connection past the
// process's open-file limit gets one warning line before the run, naming
// the limit and both remedies (raise it; --local-agents N that fits); the
// run goes on. noConnectionReuse holds no idle connections: no warning.
func TestOpenFileLimitWarning(t *testing.T) {
	for _, c := range []struct {
		name, options string
		want          bool
	}{
		{"keep-alive", `{ vus: 700, duration: '30s' }`, true},
		{"noConnectionReuse", `{ vus: 700, duration: '30s', noConnectionReuse: true }`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "s.js", `import http from 'k6/http';
import { sleep } from 'k6';
export const options = `+c.options+`;
export default function () { if (__VU === 1 && __ITER === 0) console.log('iterating'); sleep(0.5); }
`)
			p := startThrottleEnv(t, []string{nofileEnv + "=700"}, "run", "--no-summary", path)
			p.waitFor(t, "the run to start", "iterating") // Ctrl-C is the run's then
			p.signal(t, os.Interrupt)
			code := p.exited(t)
			stderr := p.stderr.String()
			got := p.stderr.Contains("warning: the script runs up to 700 VUs at once", "about 1212 open files",
				"open-file limit of 700", "ulimit -n 1212", "--local-agents 4 (about 175 VUs each)")
			if got != c.want || code != 105 {
				t.Fatalf("warning given %v, want %v; exit %d (want 105, interrupted)\nstderr: %s", got, c.want, code, stderr)
			}
			if c.want && p.stderr.Contains("open-file limit of 700") && strings.Count(stderr, "open-file limit") != 1 {
				t.Errorf("want one warning line:\n%s", stderr)
			}
		})
	}
}
