package script

import (
	"maps"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// sleepingScript is bench/vus.sh's script: one GET on a keep-alive
// connection, a check, then a sleep far longer than the benchmark.
const sleepingScript = `
import http from 'k6/http';
import { check, sleep } from 'k6';
export const options = { scenarios: { main: { executor: 'constant-vus', vus: 500, duration: '1h' } } };
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(3600);
}
`

// BenchmarkSleepingVU is what a VU holds in the running process between
// its iterations, as bench/vus.sh's VUs spend most of their time: 500 VUs
// of its script, each on its own goroutine, have sent their request (a
// keep-alive connection each, to a target in its own process) and sleep.
// It reports, per VU, the live heap after a GC, the goroutine stacks and
// the goroutines. THROTTLE_VU_STACKS=FILE writes every goroutine's stack
// there (GOTRACEBACK=system adds each frame's sp), to see what a VU asleep
// keeps on its stack; THROTTLE_VU_HEAPPROFILE=FILE the live heap (with
// -test.memprofilerate=512), as BenchmarkMemoryPerVU does.
//
// stack-KiB/VU-before-GC is the stacks before the GC that shrinks them: a
// VU's stack grows for its iteration and stays so until a GC finds it
// mostly unused, and GCs come far less often than iterations.
func BenchmarkSleepingVU(b *testing.B) { sleepingVUs(b, sleepingScript) }

// BenchmarkSleepingVUNoRequest is BenchmarkSleepingVU with the check of a
// response made in JavaScript, not requested: what the VU's stack and
// heap hold apart from its request lane.
func BenchmarkSleepingVUNoRequest(b *testing.B) {
	sleepingVUs(b, strings.Replace(sleepingScript, "http.get(__ENV.BASE + '/')", "({ status: 200 })", 1))
}

// densityScript is bench/vus.sh's script as it is, but for its target
// (the benchmark's, one address: the eight-address spread stays in the
// URL's query so the template is the same work) and its first sleep (a
// moment, not a period): its init progress marker, the options object and
// Math.random included. What it holds beyond BenchmarkSleepingVU's script
// is what the CLI's VUs hold beyond the benchmark's.
const densityScript = `
import http from 'k6/http';
import { check, sleep } from 'k6';

const url = ` + "`${__ENV.BASE}/index.html?${2 + (__VU % 8)}:${__ENV.PORT}`" + `;
if (__VU > 0 && (__VU % __ENV.STEP === 0 || __VU == __ENV.LAST1 || __VU == __ENV.LAST2)) console.log(` + "`initialised ${__VU}`" + `);

export const options = {
  noConnectionReuse: __ENV.REUSE !== '1',
  scenarios: {
    density: { executor: 'constant-vus', vus: +__ENV.VUS, duration: __ENV.DURATION },
  },
};

export default function () {
  if (__ITER === 0) sleep(Math.random() * 0.02);
  const res = http.get(url);
  check(res, { 'status is 200': (r) => r.status === 200 });
  sleep(3600);
}
`

// builtinMarkers is the init progress marker bench/vus.sh had until
// session 10: String(), split, map (which makes the Array constructor, for
// its species), Number() and includes, each made in every VU and kept.
const builtinMarkers = `const lasts = String(__ENV.LASTS).split(',').map(Number);
if (__VU > 0 && (__VU % Number(__ENV.STEP) === 0 || lasts.includes(__VU))) console.log(` + "`initialised ${__VU}`" + `);`

// BenchmarkSleepingVUDensity is BenchmarkSleepingVU with bench/vus.sh's
// script (densityScript), its environment as vus.sh gives it for 10 000
// VUs: what one of the CLI's sleeping VUs holds. markers=builtins is the
// script with the marker vus.sh had before (builtinMarkers).
func BenchmarkSleepingVUDensity(b *testing.B) {
	env := map[string]string{"PORT": "18090", "VUS": "500", "DURATION": "1h", "REUSE": "1", "STEP": "1000", "LAST1": "10000", "LAST2": "10000", "LASTS": "10000"}
	b.Run("markers=plain", func(b *testing.B) { sleepingVUsEnv(b, densityScript, env) })
	old := strings.Replace(densityScript, "if (__VU > 0 && (__VU % __ENV.STEP === 0 || __VU == __ENV.LAST1 || __VU == __ENV.LAST2)) console.log(`initialised ${__VU}`);", builtinMarkers, 1)
	old = strings.Replace(old, "vus: +__ENV.VUS", "vus: Number(__ENV.VUS)", 1)
	if !strings.Contains(old, "lasts.includes") || !strings.Contains(old, "Number(__ENV.VUS)") {
		b.Fatal("the marker to replace is not in densityScript")
	}
	b.Run("markers=builtins", func(b *testing.B) { sleepingVUsEnv(b, old, env) })
}

func sleepingVUs(b *testing.B, script string) { sleepingVUsEnv(b, script, nil) }

func sleepingVUsEnv(b *testing.B, script string, env map[string]string) {
	const vus = 500
	base := childTarget(b)
	path := writeScriptB(b, "sleep.js", script)
	for range b.N {
		vars := map[string]string{"BASE": base}
		maps.Copy(vars, env)
		r, err := Load(path, Config{Env: vars})
		if err != nil {
			b.Fatal(err)
		}
		p := r.Phases()[0]
		before := memNow()
		var wg sync.WaitGroup
		held := make([]*VU, vus)
		for i := range held {
			vu, err := r.newVU(p)
			if err != nil {
				b.Fatal(err)
			}
			held[i] = vu
			wg.Add(1)
			go func() { defer wg.Done(); vu.iteration() }()
		}
		testwait.Until(b, testwait.Deadline, "every VU's check", func() bool {
			var n uint64
			for _, c := range p.checks.results() {
				n += c.Pass + c.Failed
			}
			return n == vus
		})
		// Each VU goes from its check into sleep in microseconds; let them.
		time.Sleep(100 * time.Millisecond)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		after := memNow()
		if f := os.Getenv("THROTTLE_VU_HEAPPROFILE"); f != "" {
			writeHeapProfile(b, f)
		}
		if f := os.Getenv("THROTTLE_VU_STACKS"); f != "" {
			buf := make([]byte, 64<<20)
			_ = os.WriteFile(f, buf[:runtime.Stack(buf, true)], 0o644)
		}
		b.ReportMetric(float64(after.heap-before.heap)/vus/1024, "heap-KiB/VU")
		b.ReportMetric(float64(after.stacks-before.stacks)/vus/1024, "stack-KiB/VU")
		b.ReportMetric((float64(m.StackInuse)-float64(before.stacks))/vus/1024, "stack-KiB/VU-before-GC")
		b.ReportMetric(float64(after.goroutines-before.goroutines)/vus, "goroutines/VU")
		for _, vu := range held {
			vu.interrupt()
		}
		wg.Wait()
		for _, vu := range held {
			vu.close()
		}
	}
}

// memState is what the runtime holds, after a GC.
type memState struct {
	heap, stacks uint64
	goroutines   int
}

func memNow() memState {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memState{heap: m.HeapAlloc, stacks: m.StackInuse, goroutines: runtime.NumGoroutine()}
}
