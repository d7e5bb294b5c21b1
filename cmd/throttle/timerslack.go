package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// timerSlackEnv sets the timer slack of a k6 script run's processes: how
// late the kernel may fire a thread's timers so that it can fire several
// at once (Linux's prctl PR_SET_TIMERSLACK; the kernel's default is 50µs).
// A script's threads sleep and wake on timers all the time (the Go
// runtime's sysmon polls every 20µs while a P runs, idle Ps sleep on
// futexes with timeouts, VUs' sleep()s): a larger slack lets their expiries
// coalesce, which cut the CPU per iteration of bench/vus.sh's script by a
// quarter (docs/performance.md, "Timer slack"). Events (a socket becoming
// readable, a goroutine made runnable) wake a thread at once whatever the
// slack: only timers fire later, by at most the slack.
const timerSlackEnv = "THROTTLE_TIMERSLACK"

// defaultTimerSlack is the slack a script run takes when timerSlackEnv is
// unset.
const defaultTimerSlack = time.Millisecond

// maxTimerSlack bounds the setting: a slack is a tolerance on timers, and
// a larger one would be a delay a script's sleep() shows.
const maxTimerSlack = 100 * time.Millisecond

// timerSlack reads timerSlackEnv: defaultTimerSlack when unset, 0 for "0"
// (leave the kernel's default alone). A value that is not a duration in
// (0, maxTimerSlack] is bad input.
func timerSlack() (time.Duration, error) {
	v := strings.TrimSpace(os.Getenv(timerSlackEnv))
	if v == "" {
		return defaultTimerSlack, nil
	}
	d, err := time.ParseDuration(v)
	if v == "0" || err == nil && d == 0 {
		return 0, nil
	}
	if err != nil || d < 0 || d > maxTimerSlack {
		return 0, fmt.Errorf("%s=%q: want a duration up to %v such as 1ms or 250us, or 0 for the kernel's default", timerSlackEnv, os.Getenv(timerSlackEnv), maxTimerSlack)
	}
	return d, nil
}
