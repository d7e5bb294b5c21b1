package script

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/testwait"
)

// syncBuf is a log sink several goroutines write to.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func bufLogger() (*slog.Logger, *syncBuf) {
	b := &syncBuf{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

// withPanicHook gives every VU a global __hostPanic(), a Go function that
// panics as a k6 module's bug would, for the test's duration.
func withPanicHook(t *testing.T) {
	runtimeHook = func(vu *VU) {
		_ = vu.rt.GlobalObject().Set("__hostPanic", func(sobek.FunctionCall) sobek.Value {
			var m map[string]int
			m["boom"]++ // a nil map: a runtime panic, as a real bug makes
			return sobek.Undefined()
		})
	}
	t.Cleanup(func() { runtimeHook = nil })
}

// A Go panic in the host code an iteration calls fails that iteration,
// is logged once (with where it happened) and counted; the VU goes on with
// its next iterations, and setup's own panic fails setup with an error,
// not the process.
func TestHostPanicRecovered(t *testing.T) {
	withPanicHook(t)
	_, base := startTarget(t, robust())
	path := writeScript(t, "p.js", `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 6 } } };
export default function () {
  http.get(__ENV.BASE + '/');
  if (__ITER % 2 === 1) { __hostPanic(); }
}
`)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log}, time.Minute)
	if res.Interrupted {
		t.Fatal("interrupted")
	}
	c := r.Phases()[0].Counts()
	if c.IterOK != 6 || c.IterFailed != 6 || r.Panics() != 6 {
		t.Fatalf("iterations ok %d failed %d, panics %d: want 6, 6, 6", c.IterOK, c.IterFailed, r.Panics())
	}
	if c.Classes[engine.ClassOK] != 12 {
		t.Fatalf("%d ok requests, want 12", c.Classes[engine.ClassOK])
	}
	logged := buf.String()
	if n := strings.Count(logged, "Go panic"); n != 1 || !strings.Contains(logged, "lifecycle_test.go") || !strings.Contains(logged, "assignment to entry in nil map") {
		t.Fatalf("want the panic logged once with its site and value, got:\n%s", logged)
	}

	path = writeScript(t, "s.js", `
export function setup() { __hostPanic(); }
export default function () {}
`)
	rr, err := Load(path, Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rr.Run(context.Background())
	var hp *HostPanic
	if !errors.As(err, &hp) || !strings.HasPrefix(err.Error(), "setup: internal error: a Go panic") {
		t.Fatalf("setup's panic: err %v", err)
	}
}

// An iteration that never returns is cut off at gracefulStop with one
// warning naming the scenario, the VU and the script line it loops on.
func TestStuckIterationNamed(t *testing.T) {
	path := writeScript(t, "stuck.js", `
export const options = { scenarios: { spin: { executor: 'constant-vus', vus: 1, duration: '100ms', gracefulStop: '200ms' } } };
export default function () {
  let n = 0;
  while (true) { n++; }
}
`)
	log, buf := bufLogger()
	r, _ := runScript(t, path, "", Config{Logger: log}, time.Minute)
	logged := buf.String()
	if !strings.Contains(logged, "scenario spin: VU 1's iteration 0 (scenario iteration 0) did not end within gracefulStop (200ms) and was cut off, running at") ||
		!strings.Contains(logged, "stuck.js:5") {
		t.Fatalf("want the stuck iteration named with its line, got:\n%s", logged)
	}
	if c := r.Phases()[0].Counts(); c.IterOK+c.IterFailed != 0 {
		t.Fatalf("the cut-off iteration counted: %+v", c)
	}
}

// stage runs a script whose lifecycle function named by stage blocks
// forever (a loop in JavaScript) and interrupts it once it runs, the way
// the first Ctrl-C does: the run ends with what it gathered, Stopped naming
// the stage, and what follows the stage still runs.
func TestLifecycleInterrupted(t *testing.T) {
	base, paths := pathRecorder(t)
	for _, c := range []struct {
		stage    string
		src      string
		wantIter bool   // the scenario ran
		running  string // the request that shows the stage runs ("": none)
	}{
		{"setup", `export function setup() { http.get(__ENV.BASE + '/setup'); globalThis.entered = true; while (true) {} }
export function teardown() { throw new Error('teardown must not run after setup was stopped'); }`, false, "/setup"},
		{"teardown", `export function teardown() { http.get(__ENV.BASE + '/teardown'); sleep(3600); }`, true, "/teardown"},
		{"handleSummary", `export function handleSummary(data) { while (true) {} }`, true, ""},
	} {
		t.Run(c.stage, func(t *testing.T) {
			src := `import http from 'k6/http';
import { sleep } from 'k6';
export const options = { iterations: 2 };
export default function () { http.get(__ENV.BASE + '/'); }
` + c.src
			if c.stage != "handleSummary" {
				src += "\nexport function handleSummary(data) { return { stdout: 'reqs=' + data.metrics.http_reqs.values.count }; }\n"
			}
			path := writeScript(t, "l.js", src)
			r, err := Load(path, Config{Env: map[string]string{"BASE": base}})
			if err != nil {
				t.Fatal(err)
			}
			type out struct {
				res *RunResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				res, err := r.Run(context.Background())
				done <- out{res, err}
			}()
			var o out
			if c.running != "" {
				// Interrupt once, when the stage runs: an Interrupt repeated
				// after it took stops the handleSummary that follows (under
				// load the 5 ms poll landed there, and Stopped said so).
				testwait.Until(t, testwait.Deadline, c.stage+"'s request", func() bool { return slices.Contains(paths(), c.running) })
				r.Interrupt()
				o = testwait.Receive(t, done, "the run to end after "+c.stage+" was interrupted")
			} else {
				// The last stage: interrupt until it takes (it does nothing
				// before the stage runs, and nothing follows it).
				testwait.Until(t, testwait.Deadline, c.stage+" to be interrupted", func() bool {
					r.Interrupt()
					select {
					case o = <-done:
						return true
					default:
						return false
					}
				})
			}
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.res.Stopped != c.stage || !o.res.Interrupted {
				t.Fatalf("stopped %q interrupted %v, want %q", o.res.Stopped, o.res.Interrupted, c.stage)
			}
			iters := r.Phases()[0].Counts().IterOK
			if c.wantIter != (iters == 2) {
				t.Fatalf("%d iterations", iters)
			}
			switch c.stage {
			case "handleSummary":
				if !errors.Is(o.res.SummaryErr, ErrStopped) {
					t.Fatalf("summary err %v", o.res.SummaryErr)
				}
			default:
				want := "reqs=3" // two iterations and teardown's request
				if c.stage == "setup" {
					want = "reqs=1" // setup's own
				}
				if len(o.res.Outputs) != 1 || string(o.res.Outputs[0].Data) != want {
					t.Fatalf("handleSummary's outputs %q, want %s", o.res.Outputs, want)
				}
			}
		})
	}
}

// exec.test.abort() in setup is the script's abort, never taken for a
// signal (it ends the run's context as a signal does): no scenario runs,
// the result says aborted by the script, Stopped stays empty. Repeated:
// the two raced before.
func TestAbortInSetupIsNotASignal(t *testing.T) {
	path := writeScript(t, "ab.js", `
import exec from 'k6/execution';
export const options = { iterations: 1 };
export function setup() { exec.test.abort('no data'); }
export default function () { throw new Error('must not run'); }
`)
	for range 5 {
		r, err := Load(path, Config{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !res.AbortedByScript || res.Stopped != "" || res.Interrupted || r.Phases()[0].Counts().IterFailed != 0 {
			t.Fatalf("result %+v", res)
		}
	}
}
