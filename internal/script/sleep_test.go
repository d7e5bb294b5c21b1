package script

import (
	"testing"
	"time"
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
