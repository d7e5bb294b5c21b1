package script

import (
	"context"
	"fmt"
	"strings"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
)

// benchTimings are one keep-alive request's parts, as the engine times them.
var benchTimings = engine.Timings{Duration: 180 * time.Microsecond, Sending: 4 * time.Microsecond,
	Waiting: 150 * time.Microsecond, Receiving: 26 * time.Microsecond}

// BenchmarkRequestMetrics is one request's k6 built-in metrics (the eleven
// http_req_* and data_* values) recorded by 4 goroutines at once, as 4 VUs
// record theirs: no sub-metric, no point hook, so no tag set is built.
func BenchmarkRequestMetrics(b *testing.B) {
	var ms metrics
	bt := newBuiltins(&ms)
	tags := func() map[string]string { panic("tags built with no sub-metric and no point hook") }
	b.ReportAllocs()
	b.SetParallelism(2) // 2 × GOMAXPROCS goroutines: 4 on this 2-core machine
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bt.request("default", benchTimings, false, 80, 160, tags)
		}
	})
}

// BenchmarkRequestMetricsSerial is BenchmarkRequestMetrics on one
// goroutine: the work itself, no lock contention (its instructions are
// what callgrind counts).
func BenchmarkRequestMetricsSerial(b *testing.B) {
	var ms metrics
	bt := newBuiltins(&ms)
	tags := func() map[string]string { panic("tags built with no sub-metric and no point hook") }
	b.ReportAllocs()
	for range b.N {
		bt.request("default", benchTimings, false, 80, 160, tags)
	}
}

// BenchmarkRequestMetricsTagged is BenchmarkRequestMetricsSerial with a
// point hook (an agent's, or --out json's), so the request's tag set is
// built: k6's system tags and the scenario's, eleven entries.
func BenchmarkRequestMetricsTagged(b *testing.B) {
	ms := metrics{points: func(*Metric, float64, map[string]string) {}}
	bt := newBuiltins(&ms)
	tags := func() map[string]string {
		return map[string]string{"group": "", "scenario": "default", "method": "GET", "url": "http://127.0.0.1/",
			"name": "http://127.0.0.1/", "status": "200", "expected_response": "true", "proto": "HTTP/1.1",
			"tls_version": "", "error_code": "", "check": ""}
	}
	b.ReportAllocs()
	for range b.N {
		bt.request("default", benchTimings, false, 80, 160, tags)
	}
}

// costReqs counts the requests of every BenchmarkRunSpan run in the
// process (the b.N=1 probe run included).
var costReqs uint64

// BenchmarkRunSpan is BenchmarkCost's two sides for counting instructions
// (callgrind; this machine has no hardware counters): each run lasts b.N
// tenths of a second and total-reqs counts every request the process made,
// so the difference of two runs of different -benchtime, in instructions
// over requests, is the cost of a request without the setup (Load, the
// target process's start). Run one side per process.
func BenchmarkRunSpan(b *testing.B) {
	base := childTarget(b)
	span := func(b *testing.B) time.Duration { return time.Duration(b.N) * 100 * time.Millisecond }
	b.Run("targets-file", func(b *testing.B) {
		tg, err := targets.Parse(strings.NewReader("GET "+base+"/\n"), "targets.txt")
		if err != nil {
			b.Fatal(err)
		}
		e, err := engine.New(engine.Config{Targets: tg, Limits: governor.NewLimits(governor.Concurrency, costVUs), Fixed: true,
			Duration: span(b)})
		if err != nil {
			b.Fatal(err)
		}
		res, err := e.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		costReqs += res.Counts.OK + res.Counts.Failed
		b.ReportMetric(float64(costReqs), "total-reqs")
	})
	script := func(b *testing.B, body string) {
		path := writeScriptB(b, "one.js", fmt.Sprintf(`
import http from 'k6/http';
import { check } from 'k6';
export const options = { vus: %d, duration: '%s' };
export default function () { %s }
`, costVUs, span(b), body))
		r, err := Load(path, Config{Fixed: true, Env: map[string]string{"BASE": base}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		c := r.Phases()[0].Counts()
		costReqs += c.OK + c.Failed
		b.ReportMetric(float64(costReqs), "total-reqs")
	}
	b.Run("script", func(b *testing.B) { script(b, costGet) })
	b.Run("script-check", func(b *testing.B) { script(b, costGetCheck) })
}
