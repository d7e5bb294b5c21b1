package engine

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
)

// BenchmarkAttempt is the hot path of one worker: one attempt against a
// loopback server that answers at once, counted and classified. ns/op is
// dominated by the loopback round trip; the server is fasthttp's, which
// allocates nothing per request, so allocs/op is the client's own cost.
func BenchmarkAttempt(b *testing.B) {
	tgts := serveB(b)
	e, err := New(Config{Targets: tgts, Limits: governor.NewLimits(governor.Concurrency, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.driver.Close()
	pw, _ := e.newWorker(0)
	w := pw.(*worker)
	defer w.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Iterate(time.Now())
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok\n") }}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Shutdown() })
	u, _ := url.Parse("http://" + ln.Addr().String() + "/")
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
}
