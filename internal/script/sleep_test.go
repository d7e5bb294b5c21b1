package script

import (
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// TestSleepWaitsAtLeast: k6's sleep(d) waits at least d. A long sleep ends
// on a coarse grid (phase.Coalesce), later, never earlier: each of the
// VU's sleeps, one under the grid's threshold and one over it, took at
// least what it asked for, by the script's own clock.
func TestSleepWaitsAtLeast(t *testing.T) {
	path := writeScript(t, "sleep.js", `
import { sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };
export default function () {
  for (const secs of [0.05, 1.1]) {
    const t0 = Date.now();
    sleep(secs);
    const took = Date.now() - t0;
    if (took < secs * 1000) throw new Error('sleep(' + secs + ') took ' + took + ' ms');
  }
}
`)
	r, _ := runScript(t, path, "http://127.0.0.1:1", fast(), time.Minute)
	if c := r.Phases()[0].Counts(); c.IterOK != 2 || c.Failed != 0 {
		t.Fatalf("counts %+v: want both iterations ok", c)
	}
}

// A VU asleep in a long sleep() ends it when its iteration is cut off:
// by its own interrupt (a ramp-down's gracefulRampDown running out), and
// by its phase's gracefulStop running out. Its sleep parks on its timer
// alone (phase.Pause.SleepCoalesced), so each of those wakes it.
func TestSleepEndsWhenCutOff(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "sleep.js", `
import http from 'k6/http';
import { check, sleep } from 'k6';
export const options = { scenarios: { s: { executor: 'constant-vus', vus: 2, duration: '300ms', gracefulStop: '0s' } } };
export default function () {
  check(http.get(__ENV.BASE + '/'), { 'status is 200': (r) => r.status === 200 });
  sleep(3600);
}
`)
	t.Run("interrupt", func(t *testing.T) {
		r, err := Load(path, Config{Env: map[string]string{"BASE": base}})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Phases()[0]
		vu, err := r.newVU(p)
		if err != nil {
			t.Fatal(err)
		}
		defer vu.close()
		done := make(chan struct{})
		go func() { defer close(done); vu.iteration() }()
		testwait.Until(t, testwait.Deadline, "the VU's check", func() bool {
			c := p.Checks()
			return len(c) == 1 && c[0].Pass == 1
		})
		vu.interrupt() // asleep, or about to be: either way the sleep ends
		testwait.Receive(t, done, "the interrupted VU's iteration's end")
	})
	t.Run("gracefulStop", func(t *testing.T) {
		r, _ := runScript(t, path, base, fast(), time.Minute)
		if c := r.Phases()[0].Checks(); len(c) != 1 || c[0].Pass != 2 {
			t.Fatalf("checks %+v: want both VUs' checks passed before their sleep", c)
		}
	})
}
