package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/targets"
)

// BenchmarkEngineMetrics measures what --metrics costs the engine: phases
// with it off and on, alternated (ABBA) so that drift on a shared machine
// hits both alike, each a fixed closed loop of 32 workers for 2 s against a
// loopback server in another process (this test binary, re-run as a plain
// HTTP server), wired as the CLI wires them: a latency recorder either way;
// with metrics, the phase exporter on the observer and the server, scraped
// 4 times a second (10 to 60 times a usual scrape rate). Each op is one
// off/on pair. It reports the medians of req/s and of this process's CPU
// time per request (the engine and the scraper; the server's is its own),
// the median of the pairs' on/off ratios of req/s, and the median, least
// and greatest of their on/off ratios of CPU per request. On shared cores
// both swing by more than 3 % between identical phases (an A/A run of this
// benchmark saw medians 3.6 % apart in CPU per request and 17 % in req/s),
// so the figure that resolves the cost is where the CPU goes: the scrape
// handler's share of a CPU profile,
//
//	go test -run '^$' -bench EngineMetrics -benchtime 20x -cpuprofile cpu.out ./internal/metrics
//	go tool pprof -top -cum -nodefraction=0 -nodecount=100000 cpu.out | grep -E 'Total|HandlerForTransactional'
func BenchmarkEngineMetrics(b *testing.B) {
	tg := serverProcess(b)
	var rateOff, rateOn, cpuOff, cpuOn, ratios, rateRatios []float64
	pair := func(first, second bool) {
		r1, c1 := phaseRate(b, tg, first)
		r2, c2 := phaseRate(b, tg, second)
		if first {
			r1, c1, r2, c2 = r2, c2, r1, c1
		}
		rateOff, cpuOff = append(rateOff, r1), append(cpuOff, c1)
		rateOn, cpuOn = append(rateOn, r2), append(cpuOn, c2)
		ratios = append(ratios, c2/c1)
		rateRatios = append(rateRatios, r2/r1)
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			pair(false, true)
		} else {
			pair(true, false)
		}
	}
	b.ReportMetric(median(rateOff), "req/s-off")
	b.ReportMetric(median(rateOn), "req/s-on")
	b.ReportMetric(median(cpuOff), "cpu-µs/req-off")
	b.ReportMetric(median(cpuOn), "cpu-µs/req-on")
	b.ReportMetric(median(rateRatios), "req/s-on/off")
	b.ReportMetric(median(ratios), "cpu-on/off")
	b.ReportMetric(slices.Min(ratios), "cpu-on/off-min")
	b.ReportMetric(slices.Max(ratios), "cpu-on/off-max")
}

// benchServerEnv, when set, makes this test binary a plain loopback HTTP
// server (see TestMain) for BenchmarkEngineMetrics.
const benchServerEnv = "THROTTLE_METRICS_BENCH_SERVER"

// serveForBench answers "ok" on a loopback port, prints its address, and
// exits when its stdin closes (its parent is gone).
func serveForBench() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) }))
}

// serverProcess starts this binary as the benchmark's server and returns
// the target it serves; it stops with the benchmark.
func serverProcess(b *testing.B) []targets.Target {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("bench server: %v", err)
	}
	u, err := url.Parse("http://" + strings.TrimSpace(addr) + "/")
	if err != nil {
		b.Fatal(err)
	}
	return []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
}

// phaseRate runs one phase and returns its resolved attempts per second
// and this process's CPU time per resolved attempt, in microseconds.
func phaseRate(b *testing.B, tg []targets.Target, withMetrics bool) (perSecond, cpuMicros float64) {
	b.Helper()
	l := governor.NewLimits(governor.Concurrency, 32)
	rec, err := report.NewRecorder(l.High)
	if err != nil {
		b.Fatal(err)
	}
	cfg := engine.Config{Targets: tg, Limits: l, Fixed: true, Duration: 2 * time.Second, Latency: rec, Observer: rec.Observe}
	var p *metrics.Phase
	if withMetrics {
		p = metrics.NewPhase("main", rec)
		cfg.Observer = func(w governor.Window) { rec.Observe(w); p.Observe(w) }
	}
	eng, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	stop := func() {}
	cpu0 := cpuTime(b)
	if withMetrics {
		reg := metrics.New()
		if err := reg.Register(p, metrics.Source{Limits: eng.Config().Limits, Snapshot: eng.Snapshot}); err != nil {
			b.Fatal(err)
		}
		srv, err := metrics.Listen("127.0.0.1:0", reg)
		if err != nil {
			b.Fatal(err)
		}
		stop = scrapeEvery(b, srv.URL(), 250*time.Millisecond)
		defer srv.Close()
	}
	res, err := eng.Run(context.Background())
	stop()
	cpu := cpuTime(b) - cpu0
	if err != nil {
		b.Fatal(err)
	}
	n := float64(res.Counts.OK + res.Counts.Failed)
	return n / res.End.Sub(res.Start).Seconds(), float64(cpu.Microseconds()) / n
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scrapeEvery GETs url every d, as Prometheus would, until stop; it fails
// the benchmark if a scrape fails.
func scrapeEvery(b *testing.B, url string, d time.Duration) (stop func()) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			resp, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkScrape is one scrape of a phase as the server answers it: a
// snapshot, the latency histogram read from a recorder holding 100 000
// latencies, and the text exposition.
func BenchmarkScrape(b *testing.B) {
	rec, _ := report.NewRecorder(0.05)
	for i := range 100000 {
		rec.Record(time.Duration(1+i%5000) * 10 * time.Microsecond)
	}
	var eng fakeEngine
	reg := metrics.New()
	if err := reg.Register(metrics.NewPhase("main", rec), metrics.Source{Limits: limits(), Snapshot: eng.Snapshot}); err != nil {
		b.Fatal(err)
	}
	h := reg.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
