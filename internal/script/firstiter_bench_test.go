package script

import (
	rtmetrics "runtime/metrics"
	"testing"
	"time"
)

// firstIterScript is bench/vus.sh's iteration without its sleeps: one GET
// on a keep-alive connection and a check.
const firstIterScript = `
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: 1, duration: '1h' };
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { 'status is 200': (r) => r.status === 200 });
}
`

// firstIterBatch is how many fresh VUs a batch makes before their first
// iterations run: each then holds a connection, so a batch bounds the
// descriptors open at once.
const firstIterBatch = 500

// BenchmarkFirstIteration is a VU's first iteration, as each of
// bench/vus.sh's VUs runs it once in the first period: a VU made before
// the clock (its init context is BenchmarkNewVU's) runs its first
// iteration on a goroutine of its own, as the phase runtime's worker
// does: the goroutine's start, its stack's first growth, the module
// members the script reads first, the connect to a target in its own
// process and the request. One at a time, so the figure is the
// iteration's, not a queue's. cpu-µs/op is this process's CPU (user and
// system: the client's side of the connect included, the target's not).
// start-stack-B is the size new goroutines start with here at the end
// (the runtime's average of the stacks its last GC found in use).
//
// "made" makes and closes the VUs the same way and runs no iteration:
// instruction counts of a whole process (cachegrind) take it off
// "first"'s to leave the first iterations' own.
func BenchmarkFirstIteration(b *testing.B) {
	base := childTarget(b)
	r, err := Load(writeScriptB(b, "first.js", firstIterScript), Config{Env: map[string]string{"BASE": base}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first", func(b *testing.B) { firstIterations(b, r, true) })
	b.Run("made", func(b *testing.B) { firstIterations(b, r, false) })
}

func firstIterations(b *testing.B, r *Runner, run bool) {
	p := r.Phases()[0]
	vus := make([]*VU, 0, firstIterBatch)
	done := make(chan bool)
	var spent time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; left -= len(vus) {
		b.StopTimer()
		vus = vus[:0]
		for range min(left, firstIterBatch) {
			vu, err := r.newVU(p)
			if err != nil {
				b.Fatal(err)
			}
			vus = append(vus, vu)
		}
		b.StartTimer()
		c0 := cpu()
		for _, vu := range vus {
			if !run {
				continue
			}
			go func() {
				vu.iteration()
				done <- vu.failed
			}()
			if <-done {
				b.Fatal("a first iteration failed")
			}
		}
		spent += cpu() - c0
		b.StopTimer()
		for _, vu := range vus {
			vu.close()
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "cpu-µs/op")
	s := []rtmetrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() == rtmetrics.KindUint64 {
		b.ReportMetric(float64(s[0].Value.Uint64()), "start-stack-B")
	}
}
