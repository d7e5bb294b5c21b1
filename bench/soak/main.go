// Command soak is the long-run benchmark (bench/soak.sh): one governed URL
// phase through a session, as `throttle run --url URL --rate N --window 1s
// --out r.json --timeline t.csv` runs it, for ten minutes against a real
// target, sampling the process's resident memory, heap and goroutines every
// ten seconds. It prints one line a sample, then the growth of each after
// the warm-up (largest sample after it against the first), and fails when
// resident memory grew by more than -max-growth. The heap sampled is the
// live heap as of the last collection.
//
// Loopback only: the URL must be on 127.0.0.0/8.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/targets"
)

type sample struct {
	at         time.Duration
	rss, heap  uint64 // bytes
	stacks     uint64 // goroutine stacks, bytes
	goal       uint64 // the collector's heap goal, bytes
	mapped     uint64 // heap memory the runtime holds from the OS (in use, free, not released), bytes
	gcs        uint64 // collections so far
	goroutines int
}

var exit int

func main() {
	defer func() { os.Exit(exit) }()
	target := flag.String("url", "", "the target (loopback only)")
	rate := flag.Float64("rate", 20000, "the ceiling (attempts/s)")
	start := flag.Float64("start", 100, "the opening offer")
	dur := flag.Duration("duration", 10*time.Minute, "how long the phase runs")
	window := flag.Duration("window", time.Second, "the governor's window")
	every := flag.Duration("every", 10*time.Second, "how often to sample")
	warm := flag.Duration("warmup", 2*time.Minute, "samples before it are not judged")
	maxGrowth := flag.Float64("max-growth", 0.10, "the largest resident-memory growth after the warm-up that passes")
	maxVUs := flag.Int("max-vus", 0, "the open loop's worker bound (0: the engine's default, 1000)")
	out := flag.String("out", "", "a directory for the report and timeline (default: a temporary one, removed)")
	memprofile := flag.String("memprofile", "", "write a heap profile here at the end")
	midprofile := flag.String("midprofile", "", "write a heap profile here halfway through the run")
	flag.Parse()
	if *midprofile != "" {
		go func() {
			time.Sleep(*dur / 2)
			if f, err := os.Create(*midprofile); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if *memprofile != "" {
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}()
	}
	if err := run(*target, *rate, *start, *dur, *window, *every, *warm, *maxGrowth, *maxVUs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		exit = 1
	}
}

func run(target string, rate, start float64, dur, window, every, warm time.Duration, maxGrowth float64, maxVUs int, out string) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-url %q: want an http URL", target)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-url %q: the soak sends traffic to loopback addresses only", target)
	}
	if out == "" {
		if out, err = os.MkdirTemp("", "throttle-soak-"); err != nil {
			return err
		}
		defer os.RemoveAll(out)
	}
	l := governor.NewLimits(governor.Rate, rate)
	l.Window, l.Start = window, start
	var res *engine.Result
	s := &session.Session{Stdout: os.Stdout, Stderr: io.Discard, Quiet: true,
		Outputs:  session.Outputs{JSON: filepath.Join(out, "r.json"), Timeline: filepath.Join(out, "t.csv")},
		Finished: func(r *engine.Result) { res = r }}
	cfg := engine.Config{Targets: []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}, Limits: l, Duration: dur, MaxVUs: maxVUs}

	began := time.Now()
	var samples []sample
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			sm := take(time.Since(began))
			samples = append(samples, sm)
			fmt.Printf("soak t=%4.0fs rss=%6.1f MiB live-heap=%6.1f MiB goal=%6.1f MiB heap-held=%6.1f MiB stacks=%5.1f MiB goroutines=%d gcs=%d\n",
				sm.at.Seconds(), mib(sm.rss), mib(sm.heap), mib(sm.goal), mib(sm.mapped), mib(sm.stacks), sm.goroutines, sm.gcs)
		}
	}()
	err = s.RunURL(session.URL{Engine: cfg, Settings: report.Settings{Target: target}})
	close(stop)
	<-done
	if err != nil {
		return err
	}
	if res != nil {
		c := res.Counts
		secs := res.End.Sub(res.Start).Seconds()
		fmt.Printf("soak attempts=%d (%.0f/s) windows=%d ok=%d failed=%d dropped=%d\n",
			c.OK+c.Failed, float64(c.OK+c.Failed)/secs, len(res.Windows), c.OK, c.Failed, c.Dropped)
	}
	var judged []sample
	for _, sm := range samples {
		if sm.at >= warm {
			judged = append(judged, sm)
		}
	}
	if len(judged) < 2 {
		return fmt.Errorf("%d samples after the %v warm-up: run longer", len(judged), warm)
	}
	first := judged[0]
	var peak sample
	for _, sm := range judged {
		peak.rss, peak.heap, peak.goroutines = max(peak.rss, sm.rss), max(peak.heap, sm.heap), max(peak.goroutines, sm.goroutines)
		peak.goal, peak.mapped = max(peak.goal, sm.goal), max(peak.mapped, sm.mapped)
	}
	growth := func(a, b uint64) float64 { return float64(b)/float64(a) - 1 }
	g := growth(first.rss, peak.rss)
	fmt.Printf("soak after warm-up (t≥%v, %d samples): rss %.1f → peak %.1f MiB (%+.1f %%), live heap %.1f → peak %.1f MiB (%+.1f %%), goroutines %d → peak %d\n",
		warm, len(judged), mib(first.rss), mib(peak.rss), 100*g, mib(first.heap), mib(peak.heap), 100*growth(first.heap, peak.heap),
		first.goroutines, peak.goroutines)
	fmt.Printf("soak after warm-up: heap goal %.1f → peak %.1f MiB (%+.1f %%), heap held from the OS %.1f → peak %.1f MiB (%+.1f %%)\n",
		mib(first.goal), mib(peak.goal), 100*growth(first.goal, peak.goal), mib(first.mapped), mib(peak.mapped), 100*growth(first.mapped, peak.mapped))
	// A peak is one moment (a latency stall grows the pool, its idle
	// workers retire within seconds); growth over the run is a trend: the
	// mean of the later half of the samples against the earlier half.
	half := len(judged) / 2
	mean := func(ss []sample) (rss, heap float64) {
		for _, sm := range ss {
			rss, heap = rss+float64(sm.rss), heap+float64(sm.heap)
		}
		return rss / float64(len(ss)), heap / float64(len(ss))
	}
	r1, h1 := mean(judged[:half])
	r2, h2 := mean(judged[len(judged)-half:])
	fmt.Printf("soak trend after warm-up (mean of the later %d samples against the earlier %d): rss %.1f → %.1f MiB (%+.1f %%), live heap %.1f → %.1f MiB (%+.1f %%)\n",
		half, half, r1/(1<<20), r2/(1<<20), 100*(r2/r1-1), h1/(1<<20), h2/(1<<20), 100*(h2/h1-1))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("soak load average at the end: %s", b)
	}
	if g > maxGrowth {
		return fmt.Errorf("resident memory grew %.1f %% after the warm-up: more than %.0f %%", 100*g, 100*maxGrowth)
	}
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// take samples the process now: heap is the live heap as of the last
// garbage collection (runtime/metrics /gc/heap/live:bytes), not what
// garbage not yet collected adds.
func take(at time.Duration) sample {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}, {Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(m)
	return sample{at: at, rss: rss(), heap: m[0].Value.Uint64(), stacks: m[1].Value.Uint64(), goal: m[2].Value.Uint64(),
		mapped: m[3].Value.Uint64() + m[4].Value.Uint64() + m[5].Value.Uint64(), gcs: m[6].Value.Uint64(), goroutines: runtime.NumGoroutine()}
}

// rss is the process's resident set (VmRSS in /proc/self/status), 0 where
// there is no /proc.
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
