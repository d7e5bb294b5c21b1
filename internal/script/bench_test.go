package script

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/targets"
)

// benchTargetEnv makes the test binary serve the built-in target instead of
// running tests: the cost benchmark runs its target in a child process so
// that the process CPU it measures is the load generator's alone.
const benchTargetEnv = "THROTTLE_SCRIPT_BENCH_TARGET"

// TestMain also checks that every VU, phase and server a test starts is
// gone when the tests end. fasthttp's idle-connection cleaner outlives a
// closed client by up to its idle timeout: it holds nothing and exits by
// itself.
func TestMain(m *testing.M) {
	if os.Getenv(benchTargetEnv) != "" {
		serveBenchTarget()
		return
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}

// serveBenchTarget serves a robust built-in target on a loopback port,
// prints its URL and serves until stdin closes.
func serveBenchTarget() {
	c := target.NewConfig(1e7)
	c.Latency = 0
	tg, err := target.New(c)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := target.Serve(ctx, "127.0.0.1:0", tg)
	if err != nil {
		panic(err)
	}
	fmt.Println(srv.URL())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	cancel()
	_ = srv.Wait()
}

// childTarget starts the target process and returns its URL.
func childTarget(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchTargetEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// cpu is the process's user + system CPU time so far.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costVUs and costSpan shape the cost comparison: a few workers back to
// back, no governor, long enough for thousands of requests.
const (
	costVUs  = 4
	costSpan = 2 * time.Second
)

// BenchmarkCost compares, side by side against the same target (its own
// process), the CPU this process spends per request: a targets-file
// request through the engine, and a one-request k6 script iteration.
// Both run 4 workers back to back at fixed load for 2 s. Run it with
// -benchtime=1x; it reports cpu-µs/req and req/s.
func BenchmarkCost(b *testing.B) {
	base := childTarget(b)
	b.Run("targets-file", func(b *testing.B) {
		tg, err := targets.Parse(strings.NewReader("GET "+base+"/\n"), "targets.txt")
		if err != nil {
			b.Fatal(err)
		}
		for range b.N {
			e, err := engine.New(engine.Config{Targets: tg, Limits: governor.NewLimits(governor.Concurrency, costVUs), Fixed: true, Duration: costSpan})
			if err != nil {
				b.Fatal(err)
			}
			c0 := cpu()
			res, err := e.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			reportCost(b, cpu()-c0, res.Counts.OK+res.Counts.Failed, res.Counts.Failed, res.End.Sub(res.Start))
		}
	})
	script := func(b *testing.B, opts, body string) {
		path := writeScriptB(b, "one.js", fmt.Sprintf(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: %d, duration: '%s'%s };
export default function () { %s }
`, costVUs, costSpan, opts, body))
		for range b.N {
			r, err := Load(path, Config{Fixed: true, Env: map[string]string{"BASE": base}})
			if err != nil {
				b.Fatal(err)
			}
			c0 := cpu()
			res, err := r.Run(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			c := r.Phases()[0].Counts()
			reportCost(b, cpu()-c0, c.OK+c.Failed, c.Failed, res.End.Sub(res.Start))
		}
	}
	b.Run("script", func(b *testing.B) { script(b, "", costGet) })
	// The same with a one-function check() on the response, as most k6
	// scripts have.
	b.Run("script-check", func(b *testing.B) { script(b, "", costGetCheck) })
	// A new connection for every request, as bench/vus.sh's 100 000 VUs
	// make theirs: the dial and the close beside the request.
	b.Run("script-noreuse", func(b *testing.B) { script(b, ", noConnectionReuse: true", costGet) })
}

// costGet and costGetCheck are the default functions of the cost
// benchmarks' scripts: one request, and one request with a check.
const (
	costGet      = `http.get(__ENV.BASE + '/');`
	costGetCheck = `const res = http.get(__ENV.BASE + '/'); check(res, { ok: (r) => r.status === 200 });`
)

func reportCost(b *testing.B, cpu time.Duration, reqs, failed uint64, span time.Duration) {
	if reqs == 0 || failed != 0 {
		b.Fatalf("%d requests, %d failed", reqs, failed)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(reqs), "cpu-µs/req")
	b.ReportMetric(float64(reqs)/span.Seconds(), "req/s")
}

func writeScriptB(b *testing.B, name, src string) string {
	path := b.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// typicalScript is a typical k6 script: k6/http, k6, k6/execution, an
// options object, a default function with a check.
const typicalScript = `
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
export const options = { scenarios: { main: { executor: 'constant-vus', vus: 500, duration: '1s' } } };
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { ok: (r) => r.status === 200 });
  if (exec.scenario.iterationInTest < 0) sleep(1);
}
`

// BenchmarkMemoryPerVU makes 500 VUs of a typical script (k6/http, k6,
// k6/execution, an options object, a default function with a check) and
// reports the live heap they hold per VU, after a GC.
func BenchmarkMemoryPerVU(b *testing.B) {
	const vus = 500
	path := writeScriptB(b, "mem.js", typicalScript)
	for range b.N {
		b.ReportMetric(vuHeap(b, path, vus)/vus/1024, "KiB/VU")
	}
}

// BenchmarkMemoryPerVUAfterRequest is BenchmarkMemoryPerVU once each VU
// has run one iteration (one request, closed with the connection, as
// noConnectionReuse does, to a target in its own process): what a VU
// holds between iterations, its request lane included.
func BenchmarkMemoryPerVUAfterRequest(b *testing.B) {
	const vus = 500
	base := childTarget(b)
	path := writeScriptB(b, "mem.js", strings.Replace(typicalScript, "export const options = {", "export const options = { noConnectionReuse: true,", 1))
	for range b.N {
		b.ReportMetric(vuHeapAt(b, path, base, vus, true)/vus/1024, "KiB/VU")
	}
}

// vuHeap loads the script at path, makes n VUs of its first scenario and
// returns the live heap bytes they hold, after a GC.
func vuHeap(b *testing.B, path string, n int) float64 {
	return vuHeapAt(b, path, "http://127.0.0.1:1", n, false)
}

// vuHeapAt is vuHeap with __ENV.BASE set to base; with iterate, each VU
// runs one iteration before the heap is read.
func vuHeapAt(b *testing.B, path, base string, n int, iterate bool) float64 {
	r, err := Load(path, Config{Env: map[string]string{"BASE": base}})
	if err != nil {
		b.Fatal(err)
	}
	p := r.Phases()[0]
	held := make([]*VU, 0, n)
	before := heap()
	for range n {
		vu, err := r.newVU(p)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, vu)
		if iterate {
			vu.iteration()
		}
	}
	after := heap()
	if f := os.Getenv("THROTTLE_VU_HEAPPROFILE"); f != "" {
		writeHeapProfile(b, f)
	}
	runtime.KeepAlive(held)
	runtime.KeepAlive(r)
	for _, vu := range held {
		vu.close()
	}
	return float64(after) - float64(before)
}

// writeHeapProfile writes the live heap to file (bench: set
// THROTTLE_VU_HEAPPROFILE and -test.memprofilerate=512 to see what the
// VUs of vuHeap hold).
func writeHeapProfile(b *testing.B, file string) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIterationJS is the JavaScript side of an iteration, no request:
// a default function reaching into three imported k6 modules (a check, a
// property of k6/execution, a function of k6/http), called on one VU.
func BenchmarkIterationJS(b *testing.B) {
	path := writeScriptB(b, "js.js", `
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { iterations: 1 };
export default function () {
  check(exec.scenario.name, { named: (n) => n === 'default' });
  return typeof http.get;
}
`)
	r, err := Load(path, Config{})
	if err != nil {
		b.Fatal(err)
	}
	vu, err := r.newVU(r.Phases()[0])
	if err != nil {
		b.Fatal(err)
	}
	// as VU.iteration calls it: the VU's argument array, no slice made
	vu.args[0] = sobek.Undefined()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := vu.fn(sobek.Undefined(), vu.args[:]...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewVU is one VU's construction: its runtime, its globals and
// the init context of the typical script (BenchmarkMemoryPerVU's). The
// 100 000-VU run (bench/vus.sh) makes this many times over at its start.
func BenchmarkNewVU(b *testing.B) {
	path := writeScriptB(b, "mem.js", typicalScript)
	r, err := Load(path, Config{Env: map[string]string{"BASE": "http://127.0.0.1:1"}})
	if err != nil {
		b.Fatal(err)
	}
	p := r.Phases()[0]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		vu, err := r.newVU(p)
		if err != nil {
			b.Fatal(err)
		}
		vu.close()
	}
}

// BenchmarkIteration is one VU's iterations back to back on one
// goroutine, each one request to a target in its own process: the
// script's side of BenchmarkCost without the phase's workers and
// scheduling, steady enough to count instructions per iteration
// (cachegrind, the difference of two -benchtime counts). "check" adds a
// one-function check() on the response; "targets-file" is the engine's
// own iteration on the same target, as a targets file's worker makes it
// (one engine runner, the same request each time, its body discarded).
func BenchmarkIteration(b *testing.B) {
	base := childTarget(b)
	b.Run("targets-file", func(b *testing.B) {
		meter := engine.NewMeter()
		d, err := engine.NewDriver(engine.DriverConfig{Meter: meter, Timeout: DefaultTimeout, Conns: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		run := d.Runner()
		defer run.Close()
		req := engine.Request{Method: "GET", URL: base + "/", DiscardBody: true}
		var res engine.Response
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			meter.EndIteration(run.Iterate(&req, time.Time{}, &res))
		}
		b.StopTimer()
		if res.Failed {
			b.Fatal("the last request failed")
		}
	})
	// points is a point hook that only reads, as an agent's (every value's
	// tags are then built: --out, agents, tag-filtered thresholds).
	points := func(m *Metric, v float64, tags map[string]string) { _ = tags["scenario"] }
	for _, c := range []struct {
		name, body string
		points     func(*Metric, float64, map[string]string)
		opts       string
		deltas     bool // an agent's: deltas taken every 250 iterations (a tick at 250/s)
	}{
		{"get", costGet, nil, "", false},
		{"check", costGetCheck, nil, "", false},
		// the same work in JavaScript alone: the object, the function, its call
		{"check-js", `const res = http.get(__ENV.BASE + '/'); const c = { ok: (r) => r.status === 200 }; c.ok(res);`, nil, "", false},
		{"check-points", costGetCheck, points, "", false},
		// an agent's iteration (bench/vus.sh's, without the sleep): its
		// point hook, its metric deltas taken once a tick
		{"check-agent", costGetCheck, points, "", true},
		// bench/vus.sh's iteration without its sleeps: a new connection for
		// every request
		{"check-noreuse", costGetCheck, nil, ", noConnectionReuse: true", false},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := writeScriptB(b, "it.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, duration: '1h'`+c.opts+` };
export default function () { `+c.body+` }
`)
			r, err := Load(path, Config{Fixed: true, Env: map[string]string{"BASE": base}, Points: c.points, Deltas: c.deltas})
			if err != nil {
				b.Fatal(err)
			}
			vu, err := r.newVU(r.Phases()[0])
			if err != nil {
				b.Fatal(err)
			}
			defer vu.close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				vu.iteration()
				if c.deltas && i%250 == 249 {
					r.TakeDeltas()
				}
			}
			b.StopTimer()
			if vu.failed {
				b.Fatal("the last iteration's request failed")
			}
		})
	}
}
