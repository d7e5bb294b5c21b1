package script

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestExecutionSegmentsRunTheirParts: three instances running the thirds
// of one script make, together, the authored test: every VU of the
// constant-vus scenario runs on exactly one of them, the shared iterations
// sum to the authored count, and the arrival-rate parts' arrivals sum to
// what the whole test schedules.
func TestExecutionSegmentsRunTheirParts(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "seg.js", `
import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = { scenarios: {
  cv: { executor: 'constant-vus', vus: 10, duration: '1s', exec: 'cv', gracefulStop: '5s' },
  si: { executor: 'shared-iterations', vus: 3, iterations: 11, exec: 'si' },
  car: { executor: 'constant-arrival-rate', rate: 30, duration: '1s', preAllocatedVUs: 6, exec: 'car', gracefulStop: '5s' },
} };
export function cv() { if (__ITER === 0) console.log('vu'); sleep(0.02); }
export function si() { http.get(__ENV.BASE + '/'); }
export function car() { http.get(__ENV.BASE + '/'); }
`)
	run := func(seg string) map[string]uint64 {
		var out consoleLines
		cfg := Config{Console: out.add}
		if seg != "" {
			if err := cfg.CLIOptions.Set("execution-segment", seg); err != nil {
				t.Fatal(err)
			}
			if err := cfg.CLIOptions.Set("execution-segment-sequence", "0,1/3,2/3,1"); err != nil {
				t.Fatal(err)
			}
		}
		r, _ := runScript(t, path, base, cfg, 60*time.Second)
		got := map[string]uint64{}
		for _, l := range out.all() {
			got[strings.TrimSpace(l)]++
		}
		for _, p := range r.Phases() {
			c := p.Counts()
			got[p.Name()] = c.IterOK + c.IterFailed + c.Dropped
			if p.Name() == "car" {
				got["car rate"] = uint64(math.Round(p.Scenario().Rate))
				if got["car"] > 0 {
					got["car parts"] = 1
				}
			}
			if c.Failed != 0 {
				t.Errorf("%s %s: %d failed requests", seg, p.Name(), c.Failed)
			}
		}
		return got
	}
	whole := run("")
	sum := map[string]uint64{}
	for _, seg := range []string{"0:1/3", "1/3:2/3", "2/3:1"} {
		for k, v := range run(seg) {
			sum[k] += v
		}
	}
	if whole["vu"] != 10 || sum["vu"] != 10 {
		t.Errorf("constant-vus: %d VUs ran in the whole test, %d over the thirds; want 10 each", whole["vu"], sum["vu"])
	}
	if whole["si"] != 11 || sum["si"] != 11 {
		t.Errorf("shared-iterations: %d iterations in the whole test, %d over the thirds; want 11 each", whole["si"], sum["si"])
	}
	// An arrival-rate part runs its share of the rate: the parts' rates sum
	// to the authored 30/s exactly. How many arrivals a timed schedule
	// makes depends on the machine's load, so only that each part ran
	// some is asserted of the counts.
	if sum["car rate"] != 30 || whole["car rate"] != 30 {
		t.Errorf("constant-arrival-rate: rates sum to %v/s over the thirds, %v/s in the whole test; want 30", sum["car rate"], whole["car rate"])
	}
	if sum["car parts"] != 3 {
		t.Errorf("constant-arrival-rate: %d of the three parts made arrivals", sum["car parts"])
	}
}

// TestSegmentIdleScenario: a part with nothing of a scenario to run makes
// no phase for it.
func TestSegmentIdleScenario(t *testing.T) {
	path := writeScript(t, "idle.js", `
export const options = { scenarios: { one: { executor: 'per-vu-iterations', vus: 1, iterations: 1 } } };
export default function () {}
`)
	cfg := Config{}
	if err := cfg.CLIOptions.Set("execution-segment", "1/2:1"); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Phases()) != 0 || r.Options().Segment.String() != "1/2:1" {
		t.Fatalf("phases %d, segment %s: want none in 1/2:1 (the one VU is in 0:1/2)", len(r.Phases()), r.Options().Segment)
	}
}
