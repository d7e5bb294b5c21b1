package script

import (
	"fmt"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGCMarkPerVU is what one GC cycle costs per VU held, the input
// to any GC headroom policy once VUs are made (initgc.go): the CPU of a
// cycle grows with the live heap, and VUs are most of it. It holds 4 000
// VUs of the typical script (BenchmarkMemoryPerVU's) and times b.N forced
// cycles by the process's CPU (user and system, every thread: the mark
// workers run on both cores). Each op is one cycle.
func BenchmarkGCMarkPerVU(b *testing.B) {
	const vus = 4000
	base := heap()
	held := makeVUsB(b, writeScriptB(b, "mem.js", typicalScript), vus)
	live := heap()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ResetTimer()
	before := cpuTime()
	for range b.N {
		runtime.GC()
	}
	cpu := cpuTime() - before
	b.StopTimer()
	perCycle := float64(cpu) / float64(b.N)
	b.ReportMetric(perCycle/float64(time.Millisecond), "cpu-ms/cycle")
	b.ReportMetric(perCycle/float64(vus)/float64(time.Microsecond), "cpu-µs/VU")
	b.ReportMetric(perCycle/(float64(live)/(1<<30))/float64(time.Millisecond), "cpu-ms/GiB-live")
	b.ReportMetric(float64(live-base)/vus/1024, "KiB/VU")
	b.ReportMetric(float64(m.HeapObjects)/vus, "objects/VU")
	runtime.KeepAlive(held)
	for _, vu := range held {
		vu.close()
	}
}

// makeVUsB loads the script at path (__ENV.BASE a closed port) and makes
// n VUs of its first scenario.
func makeVUsB(b *testing.B, path string, n int) []*VU {
	r, err := Load(path, Config{Env: map[string]string{"BASE": "http://127.0.0.1:1"}})
	if err != nil {
		b.Fatal(err)
	}
	vus := make([]*VU, n)
	for i := range vus {
		if vus[i], err = r.newVU(r.Phases()[0]); err != nil {
			b.Fatal(err)
		}
	}
	return vus
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGCHeadroom checks the model a GC headroom policy rests on:
// with L bytes live and GOGC=g, a cycle comes every L·g/100 bytes
// allocated and marks L, so the GC's CPU per byte allocated is the mark
// cost per live byte × 100/g, whatever L is. 4 000 VUs of the typical
// script are held (the live heap), and two goroutines run b.N
// iterations of a JavaScript-only script on 200 other VUs (a check, no
// request: garbage as an iteration makes it) at each GOGC and with the GC
// off. It reports the process's CPU per iteration (user and system: the
// runtime's own GC CPU figures count P-time, which on a loaded machine is
// more than the CPU it got), so the GC's CPU at a GOGC is its cpu-µs/iter
// less GOGC=off's; and the cycles.
func BenchmarkGCHeadroom(b *testing.B) {
	const vus, workers, busy = 4000, 2, 200
	held := makeVUsB(b, writeScriptB(b, "mem.js", typicalScript), vus)
	js := strings.Replace(strings.Replace(sleepingScript, "http.get(__ENV.BASE + '/')", "({ status: 200, body: 'x'.repeat(64) })", 1), "sleep(3600);", "", 1)
	running := makeVUsB(b, writeScriptB(b, "js.js", js), busy)
	live := heap()
	for _, g := range []int{-1, 100, 50, 25, 10} {
		name := fmt.Sprintf("GOGC=%d", g)
		if g < 0 {
			name = "GOGC=off"
		}
		b.Run(name, func(b *testing.B) {
			runtime.GC()
			old := debug.SetGCPercent(g)
			defer debug.SetGCPercent(old)
			alloc0, cycles0 := totalAlloc(), gcCycles()
			cpu0 := cpuTime()
			b.ResetTimer()
			var wg sync.WaitGroup
			var next atomic.Int64
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; next.Add(1) <= int64(b.N); i += workers {
						running[i%busy].iteration()
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			alloc, cycles, cpu := totalAlloc()-alloc0, gcCycles()-cycles0, cpuTime()-cpu0
			b.ReportMetric(float64(live)/(1<<20), "live-MiB")
			b.ReportMetric(float64(alloc)/float64(b.N), "B-alloc/iter")
			b.ReportMetric(float64(cycles), "cycles")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/iter")
		})
	}
	runtime.KeepAlive(held)
	for _, vu := range append(held, running...) {
		vu.close()
	}
}

// totalAlloc is the bytes allocated so far; gcCycles the GC cycles
// completed.
func totalAlloc() uint64 { return runtimeMetric("/gc/heap/allocs:bytes") }

func gcCycles() uint64 { return runtimeMetric("/gc/cycles/total:gc-cycles") }

func runtimeMetric(name string) uint64 {
	s := []rtmetrics.Sample{{Name: name}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}
