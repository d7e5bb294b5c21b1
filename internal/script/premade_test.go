package script

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script/options"
	"github.com/throttlekit/throttle/internal/testwait"
)

// The VUs each scenario starts with are planned as k6 plans them.
func TestPlannedVUs(t *testing.T) {
	for _, c := range []struct {
		sc   options.Scenario
		want int
	}{
		{options.Scenario{Executor: options.ConstantVUs, VUs: 7}, 7},
		{options.Scenario{Executor: options.PerVUIterations, VUs: 3}, 3},
		{options.Scenario{Executor: options.SharedIterations, VUs: 4}, 4},
		{options.Scenario{Executor: options.RampingVUs, StartVUs: 2, Stages: []options.Stage{{Duration: time.Second, Target: 9}, {Duration: time.Second, Target: 1}}}, 9},
		{options.Scenario{Executor: options.RampingVUs, StartVUs: 5, Stages: []options.Stage{{Duration: time.Second, Target: 1}}}, 5},
		{options.Scenario{Executor: options.ConstantArrivalRate, PreAllocatedVUs: 3, MaxVUs: 50}, 3},
		{options.Scenario{Executor: options.RampingArrivalRate, PreAllocatedVUs: 6, MaxVUs: 6}, 6},
	} {
		if got := plannedVUs(c.sc); got != c.want {
			t.Errorf("%s %+v: %d VUs planned, want %d", c.sc.Executor, c.sc, got, c.want)
		}
	}
}

// Every VU's init context has run when setup() runs, ids 1..N (the setup
// VU's is 0), and the scenarios make no VU of their own after.
func TestSetupSeesEveryVUInitialised(t *testing.T) {
	path := writeScript(t, "init.js", `
import exec from 'k6/execution';
console.log('init ' + __VU);
export const options = { scenarios: {
  a: { executor: 'per-vu-iterations', vus: 4, iterations: 1 },
  b: { executor: 'shared-iterations', vus: 3, iterations: 3 },
} };
export function setup() { console.log('setup'); }
export default function () { console.log('iter ' + __VU + ' ' + exec.vu.idInTest); }
`)
	var con consoleLines
	runScript(t, path, "http://127.0.0.1:1", Config{Console: con.add}, time.Minute)
	lines := con.all()
	at := slices.Index(lines, "setup")
	if at < 0 {
		t.Fatalf("console %q: no setup", lines)
	}
	var before []int
	for _, l := range lines[:at] {
		if n, ok := strings.CutPrefix(l, "init "); ok {
			id, _ := strconv.Atoi(n)
			before = append(before, id)
		}
	}
	slices.Sort(before)
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(before, want) {
		t.Fatalf("console %q: inits before setup %v, want %v", lines, before, want)
	}
	iters := 0
	for _, l := range lines[at+1:] {
		if strings.HasPrefix(l, "init ") {
			t.Fatalf("console %q: a VU made after setup", lines)
		}
		if f := strings.Fields(l); len(f) == 3 && f[0] == "iter" {
			iters++
			if f[1] != f[2] {
				t.Fatalf("line %q: __VU and exec.vu.idInTest differ", l)
			}
		}
	}
	if iters != 7 {
		t.Fatalf("console %q: %d iterations, want 7", lines, iters)
	}
}

// A constant-vus scenario whose VUs' init is slow runs its whole duration
// after every init ended: none of it is spent making VUs.
func TestSlowInitBeforeTheScenarioClock(t *testing.T) {
	path := writeScript(t, "slow.js", `
const t0 = Date.now();
if (__VU > 0) { while (Date.now() - t0 < 150) {} }
console.log('inited ' + __VU + ' ' + Date.now());
export const options = { scenarios: { c: { executor: 'constant-vus', vus: 4, duration: '400ms', gracefulStop: '0s' } } };
export default function () { console.log('iter ' + __VU + ' ' + Date.now()); }
`)
	var con consoleLines
	r, _ := runScript(t, path, "http://127.0.0.1:1", Config{Console: con.add}, time.Minute)
	var lastInit, firstIter int64
	for _, l := range con.all() {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		ms, _ := strconv.ParseInt(f[2], 10, 64)
		switch {
		case f[0] == "inited" && f[1] != "0":
			lastInit = max(lastInit, ms)
		case f[0] == "iter" && (firstIter == 0 || ms < firstIter):
			firstIter = ms
		}
	}
	start, end := r.Phases()[0].Span()
	if lastInit == 0 || firstIter == 0 {
		t.Fatalf("console %q: want inits and iterations", con.all())
	}
	if firstIter < lastInit || start.UnixMilli() < lastInit {
		t.Fatalf("the last init ended at %d ms, the scenario started at %d ms, its first iteration at %d ms: want both after", lastInit, start.UnixMilli(), firstIter)
	}
	if d := end.Sub(start); d < 400*time.Millisecond {
		t.Fatalf("the scenario ran %v, want its 400ms", d)
	}
}

// An exception in one VU's init context fails the run before setup(),
// with k6's init error.
func TestPremadeInitErrorBeforeSetup(t *testing.T) {
	path := writeScript(t, "boom.js", `
if (__VU === 5) { throw new Error('boom in VU ' + __VU); }
export const options = { vus: 10, iterations: 10 };
export function setup() { console.log('setup'); }
export default function () {}
`)
	var con consoleLines
	r, err := Load(path, Config{Console: con.add})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = r.Run(ctx)
	var ie *InitError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "boom in VU 5") {
		t.Fatalf("err %v: want the init error of VU 5", err)
	}
	if slices.Contains(con.all(), "setup") {
		t.Fatal("setup ran after an init error")
	}
	if c := r.Phases()[0].Counts(); c.Started != 0 || c.IterOK+c.IterFailed != 0 {
		t.Fatalf("counts %+v: want no iteration", c)
	}
}

// Ending the run's context while the VUs' init contexts run (a Ctrl-C)
// stops them wherever they are: the run ends with ErrInterrupted, before
// setup.
func TestPremadeInitInterrupted(t *testing.T) {
	path := writeScript(t, "spin.js", `
if (__VU > 0) { console.log('spinning ' + __VU); while (true) {} }
export const options = { vus: 3, duration: '1s' };
export function setup() { console.log('setup'); }
export default function () {}
`)
	var con consoleLines
	// Every VU spins before the interrupt: a VU whose init had only begun
	// would be cut off at spin.js:1 and could be the one the error names.
	spinning := make(chan struct{}, 3)
	console := func(l slog.Level, msg string) {
		con.add(l, msg)
		if strings.HasPrefix(msg, "spinning") {
			spinning <- struct{}{}
		}
	}
	r, err := Load(path, Config{Console: console, InitTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx); done <- err }()
	for range 3 {
		testwait.Receive(t, spinning, "every VU's init context to spin")
	}
	cancel()
	err = testwait.Receive(t, done, "the run to end on the interrupt")
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "spin.js:2") {
		t.Fatalf("err %v: want ErrInterrupted naming spin.js:2", err)
	}
	if slices.Contains(con.all(), "setup") {
		t.Fatal("setup ran after the interrupt")
	}
}

// Making thousands of VUs before setup() takes seconds: the run says it is
// making them, and how long it took; a few VUs go by without a word.
func TestMakingVUsSaid(t *testing.T) {
	for _, vus := range []int{sayMaking, 3} {
		path := writeScript(t, "many.js", `
export const options = { scenarios: { a: { executor: 'per-vu-iterations', vus: `+strconv.Itoa(vus)+`, iterations: 1 } } };
export default function () {}
`)
		log, out := bufLogger()
		runScript(t, path, "http://127.0.0.1:1", Config{Logger: log}, time.Minute)
		making := strings.Contains(out.String(), "making "+strconv.Itoa(vus)+" VUs before setup()")
		made := strings.Contains(out.String(), strconv.Itoa(vus)+" VUs made in ")
		if want := vus >= sayMaking; making != want || made != want {
			t.Errorf("%d VUs: said making %v, said made %v, want %v\n%s", vus, making, made, want, out.String())
		}
	}
}

// A context that ends just after MakeVUs returned (an agent's, made for
// the making alone) interrupts no VU: each VU's init watch sees the end
// only after its init context ended, and must not hand the interrupt to
// the runtime, whose next call — the VU's first iteration — would then
// stop before it began. Repeated: the end races the watches.
func TestMadeVUsNotInterruptedAfter(t *testing.T) {
	path := writeScript(t, "made.js", `
export const options = { scenarios: { a: { executor: 'per-vu-iterations', vus: 4, iterations: 1 } } };
export default function () { console.log('ran ' + __VU); }
`)
	for round := range 30 {
		var con consoleLines
		r, err := Load(path, Config{Console: con.add, Env: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := r.MakeVUs(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		run, stop := context.WithTimeout(context.Background(), time.Minute)
		_, err = r.Run(run)
		stop()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		ran := 0
		for _, l := range con.all() {
			if strings.HasPrefix(l, "ran ") {
				ran++
			}
		}
		if ran != 4 {
			t.Fatalf("round %d: %d of 4 VUs ran their iteration: %q", round, ran, con.all())
		}
	}
}
