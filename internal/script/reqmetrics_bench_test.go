package script

import (
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
