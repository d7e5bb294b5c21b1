package script

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
)

// fast are governor settings that judge many windows in a test of a few
// seconds.
func fast() Config {
	w, n := 250*time.Millisecond, uint64(5)
	return Config{Tick: 25 * time.Millisecond, Governance: Governance{Window: &w, MinAttempts: &n}}
}

func TestIterationExecutors(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "it.js", `
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: {
  shared: { executor: 'shared-iterations', vus: 3, iterations: 10, exec: 'shared' },
  pervu: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'pervu', startTime: '100ms' },
} };
export function shared() { http.get(__ENV.BASE + '/'); console.log('shared', exec.scenario.iterationInTest); }
export function pervu() { http.get(__ENV.BASE + '/'); console.log('pervu', exec.vu.idInTest, __ITER); }
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	want := map[string]uint64{"shared": 10, "pervu": 6}
	for _, p := range r.Phases() {
		if c := p.Counts(); c.IterOK != want[p.Name()] || c.OK != want[p.Name()] || p.Governed() {
			t.Errorf("%s: counts %+v governed %v, want %d iterations run as authored", p.Name(), c, p.Governed(), want[p.Name()])
		}
	}
	seen := map[string]bool{}
	for _, l := range out.all() {
		if seen[l] {
			t.Errorf("line %q twice: iteration numbers must be unique", l)
		}
		seen[l] = true
	}
	for i := range 10 {
		if !seen["shared "+strconv.Itoa(i)] {
			t.Errorf("no shared iteration %d in %v", i, out.all())
		}
	}
}

// TestConstantVUsClimbs: a constant-vus scenario is a concurrency-mode
// phase whose ceiling is the authored VUs; against a robust target the
// governor climbs from the floor to it.
func TestConstantVUsClimbs(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "cv.js", `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: 8, duration: '3s' };
export default function () { http.get(__ENV.BASE + '/'); sleep(0.005); }
`)
	r, _ := runScript(t, path, base, fast(), 30*time.Second)
	p := r.Phases()[0]
	l := p.Limits()
	if l.Mode != governor.Concurrency || l.Ceiling != 8 || !p.Governed() {
		t.Fatalf("limits %+v governed %v, want a governed concurrency phase up to 8", l, p.Governed())
	}
	ws := p.Windows()
	var top float64
	for _, w := range ws {
		top = max(top, w.Decision.Offer)
	}
	if top <= l.Start {
		t.Fatalf("the offer never rose above the start %v: windows %+v", l.Start, ws)
	}
	if c := p.Counts(); c.IterOK == 0 || c.Failed != 0 {
		t.Fatalf("counts %+v", c)
	}
}

// TestConstantArrivalRateBacksOff: an authored rate far above a shedding
// target's capacity is the ceiling; the governor backs off from it.
func TestConstantArrivalRateBacksOff(t *testing.T) {
	tc := target.NewConfig(150)
	tc.Latency = 0
	_, base := startTarget(t, tc)
	path := writeScript(t, "car.js", `
import http from 'k6/http';
import throttle from 'k6/x/throttle';
throttle.configure('main', { start: 50, floor: 10 });
export const options = { scenarios: { main: { executor: 'constant-arrival-rate', rate: 5000, timeUnit: '1s', duration: '4s', preAllocatedVUs: 5, maxVUs: 50 } } };
export default function () { http.get(__ENV.BASE + '/'); }
`)
	r, _ := runScript(t, path, base, fast(), 30*time.Second)
	p := r.Phases()[0]
	l := p.Limits()
	if l.Mode != governor.Rate || l.Ceiling != 5000 || l.Start != 50 || l.Floor != 10 {
		t.Fatalf("limits %+v: want rate mode, ceiling 5000, start and floor from throttle.configure", l)
	}
	var backoff bool
	for _, w := range p.Windows() {
		backoff = backoff || w.Decision.Signal == governor.SignalBackoff
	}
	if !backoff {
		t.Fatalf("no back-off against a target of 150/s: %+v", p.Windows())
	}
	if c := p.Counts(); c.OK == 0 || c.Failed == 0 {
		t.Fatalf("counts %+v: want both served and shed attempts", c)
	}
}

// TestRampingExecutorsAsAuthored: with --no-governor the ramping executors
// follow their stages: the offer tracks the stage's value.
func TestRampingExecutorsAsAuthored(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t, "ramp.js", `
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { scenarios: {
  rvus: { executor: 'ramping-vus', startVUs: 1, stages: [{ duration: '1s', target: 4 }, { duration: '1s', target: 4 }], exec: 'vus' },
  rrate: { executor: 'ramping-arrival-rate', startRate: 10, timeUnit: '1s', preAllocatedVUs: 2, maxVUs: 10,
           stages: [{ duration: '1s', target: 100 }, { duration: '1s', target: 100 }], exec: 'rate' },
} };
export function vus() { http.get(__ENV.BASE + '/'); sleep(0.01); }
export function rate() { http.get(__ENV.BASE + '/'); }
`)
	cfg := fast()
	cfg.Fixed = true
	r, err := Load(path, withBase(cfg, base))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	peak := map[string]float64{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			for _, p := range r.Phases() {
				mu.Lock()
				peak[p.Name()] = max(peak[p.Name()], p.Snapshot().Offer)
				mu.Unlock()
			}
		}
	}()
	res, err := r.Run(t.Context())
	close(stop)
	<-done
	if err != nil || res.Interrupted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if peak["rvus"] != 4 || peak["rrate"] < 50 || peak["rrate"] > 100 {
		t.Fatalf("peak offers %v: want ramping-vus to reach 4 and ramping-arrival-rate to near 100/s, never above", peak)
	}
	for _, p := range r.Phases() {
		if c := p.Counts(); c.IterOK == 0 {
			t.Fatalf("%s ran no iterations", p.Name())
		}
		if p.Snapshot().Workers > max(p.Scenario().MaxVUs, 4) {
			t.Fatalf("%s made %d VUs", p.Name(), p.Snapshot().Workers)
		}
	}
}

func withBase(cfg Config, base string) Config {
	cfg.Env = map[string]string{"BASE": base}
	return cfg
}
