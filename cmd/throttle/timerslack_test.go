package main

import (
	"strings"
	"testing"
	"time"
)

// THROTTLE_TIMERSLACK is a duration up to 100ms or 0; anything else is
// refused in one line, exit 2, before a script run (on this machine or over
// local agents) starts.
func TestTimerSlackKnob(t *testing.T) {
	for _, c := range []struct {
		val  string
		want time.Duration
	}{{"", defaultTimerSlack}, {"0", 0}, {"0s", 0}, {"250us", 250 * time.Microsecond}, {" 4ms ", 4 * time.Millisecond}, {"100ms", 100 * time.Millisecond}} {
		t.Setenv(timerSlackEnv, c.val)
		if d, err := timerSlack(); d != c.want || err != nil {
			t.Errorf("%s=%q: %v, %v; want %v", timerSlackEnv, c.val, d, err, c.want)
		}
	}
	path := writeFile(t, "s.js", "export default function () {}\n")
	for _, val := range []string{"1", "fast", "-1ms", "101ms", "1s"} {
		t.Setenv(timerSlackEnv, val)
		for _, args := range [][]string{{"run", path}, {"run", "--local-agents", "2", "--listen", "127.0.0.1:0", path}} {
			r := cli(t, "", nil, args...)
			if r.code != 2 || !strings.Contains(r.stderr, timerSlackEnv+"=") || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("%s=%q %v: exit %d, stderr %q; want 2 and one line naming it", timerSlackEnv, val, args, r.code, r.stderr)
			}
		}
	}
}
