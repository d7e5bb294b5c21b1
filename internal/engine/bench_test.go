package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
)

// BenchmarkAttempt is the hot path of one worker: one attempt against a
// loopback server that answers at once, counted and classified. ns/op is
// dominated by the loopback round trip; allocs/op is the engine's cost on top
// of net/http's.
func BenchmarkAttempt(b *testing.B) {
	tgts := serveB(b)
	e, err := New(Config{Targets: tgts, Limits: governor.NewLimits(governor.Concurrency, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.driver.Close()
	w := e.newWorker(0)
	defer w.r.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.iterate(time.Now())
	}
	b.StopTimer()
	if _, failed := e.Attempts(); failed != 0 {
		b.Fatal("failed attempts")
	}
}

// BenchmarkFixedConcurrency runs a whole phase with 16 workers and no
// governor and reports the request rate it reached.
func BenchmarkFixedConcurrency(b *testing.B) {
	tgts := serveB(b)
	b.ReportAllocs()
	var total uint64
	var secs float64
	for range b.N {
		e, err := New(Config{Targets: tgts, Limits: governor.NewLimits(governor.Concurrency, 16), Fixed: true, Duration: 200 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		res, err := e.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		total += res.Counts.OK
		secs += res.End.Sub(res.Start).Seconds()
	}
	b.ReportMetric(float64(total)/secs, "req/s")
}

func serveB(b *testing.B) []targets.Target {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) }))
	b.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/")
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
}
