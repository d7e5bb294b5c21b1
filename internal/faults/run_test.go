package faults

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testdns"
)

// heapPeak samples the heap in use until stop closes and returns its peak.
// It collects first: the garbage an earlier run of the package left is
// not this run's.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	runtime.GC()
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// maxHeap bounds the heap of a run at 200 arrivals/s: an endless or huge
// body held whole would take gigabytes.
const maxHeap = 100 << 20

// ran is what one fault run left: the engine's result, the report as
// written to its JSON file, the timeline's rows and the heap's peak.
type ran struct {
	res      *engine.Result
	rep      report.Report
	timeline [][]string
	peak     uint64
}

// runURL runs a fixed-rate URL phase of 200 arrivals/s against u for dur
// through a session, as `throttle run URL --out r.json --timeline t.csv`
// does, and reads back the report it wrote. The run must end by itself
// and write both files.
func runURL(t *testing.T, u string, dur, timeout time.Duration) ran {
	t.Helper()
	return runURLWith(t, u, http.Header{}, dur, timeout)
}

// runURLWith is runURL with the request headers hdr (-H).
func runURLWith(t *testing.T, u string, hdr http.Header, dur, timeout time.Duration) ran {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	l := governor.NewLimits(governor.Rate, 200)
	l.Window = 500 * time.Millisecond
	dir := t.TempDir()
	var out ran
	var stdout bytes.Buffer
	s := &session.Session{Stdout: &stdout, Stderr: io.Discard, Quiet: true,
		Outputs:  session.Outputs{JSON: filepath.Join(dir, "r.json"), Timeline: filepath.Join(dir, "t.csv")},
		Finished: func(r *engine.Result) { out.res = r }}
	if err := s.Outputs.Check(); err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{
		Targets: []targets.Target{{Method: "GET", URL: pu, Header: hdr}},
		Limits:  l, Fixed: true, Duration: dur, Timeout: timeout, Grace: time.Second, MaxVUs: 400,
		// The unresolvable name is answered on loopback: no DNS query
		// leaves the machine.
		Resolver: testdns.Resolver(t),
	}
	stop := make(chan struct{})
	peak := heapPeak(stop)
	done := make(chan error, 1)
	go func() { done <- s.RunURL(session.URL{Engine: cfg, Settings: report.Settings{Target: u}}) }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute")
	}
	close(stop)
	out.peak = <-peak
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	if out.res == nil {
		t.Fatal("the session handed over no result")
	}
	b, err := os.ReadFile(s.Outputs.JSON)
	if err != nil {
		t.Fatalf("report not written: %v", err)
	}
	if err := json.Unmarshal(b, &out.rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	f, err := os.Open(s.Outputs.Timeline)
	if err != nil {
		t.Fatalf("timeline not written: %v", err)
	}
	defer f.Close()
	if out.timeline, err = csv.NewReader(f).ReadAll(); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	return out
}

// checkRun asserts what every fault run must show: the heap stayed
// bounded, every arrival is accounted for (an iteration of one try that
// ended ok, failed or aborted, or a dropped arrival), every attempt
// started resolved or was aborted, and the report written says the same
// as the engine counted, window rows included.
func checkRun(t *testing.T, r ran) {
	t.Helper()
	c := r.res.Counts
	o := r.rep.Latency.Overall
	t.Logf("%d arrivals, classes %v, dropped %d, aborted %d, latency p50 %.1f ms p90 %.1f ms, heap peak %d MiB",
		r.res.Arrivals, c.Classes, c.Dropped, c.Aborted, o.P50Ms, o.P90Ms, r.peak>>20)
	if r.peak > maxHeap {
		t.Errorf("heap peaked at %d MiB", r.peak>>20)
	}
	if got := c.IterOK + c.IterFailed + c.Aborted + c.Dropped; got != r.res.Arrivals || r.res.Arrivals < 20 {
		t.Errorf("%d arrivals, %d accounted for: %+v", r.res.Arrivals, got, c)
	}
	if c.Started != c.OK+c.Failed+c.Aborted {
		t.Errorf("%d attempts started, %d resolved or aborted", c.Started, c.OK+c.Failed+c.Aborted)
	}
	a := r.rep.Attempts
	by := a.ByClass
	if a.Total != c.OK+c.Failed || a.OK != c.OK || by.Refused != c.Classes[engine.ClassRefused] || by.Reset != c.Classes[engine.ClassReset] ||
		by.Timeout != c.Classes[engine.ClassTimeout] || by.DNS != c.Classes[engine.ClassDNS] || by.TLS != c.Classes[engine.ClassTLS] ||
		r.rep.DroppedArrivals != c.Dropped || r.rep.AbortedAttempts != c.Aborted {
		t.Errorf("report's attempts %+v, dropped %d, aborted %d: the engine counted %+v", a, r.rep.DroppedArrivals, r.rep.AbortedAttempts, c)
	}
	if len(r.res.Windows) == 0 || len(r.rep.Windows) != len(r.res.Windows) || len(r.timeline) != len(r.res.Windows)+1 {
		t.Errorf("%d windows closed, %d in the report, %d timeline rows (and a header)", len(r.res.Windows), len(r.rep.Windows), len(r.timeline)-1)
	}
}

// classesWithin asserts that every resolved attempt has one of the classes
// in want, and that each class of need was seen.
func classesWithin(t *testing.T, c engine.Counts, want []engine.Class, need ...engine.Class) {
	t.Helper()
	var n uint64
	for _, k := range want {
		n += c.Classes[k]
	}
	if resolved := c.OK + c.Failed; resolved == 0 || n != resolved {
		t.Errorf("classes %v: want every one of %d resolved attempts in %v", c.Classes, resolved, want)
	}
	for _, k := range need {
		if c.Classes[k] == 0 {
			t.Errorf("classes %v: no %v seen", c.Classes, k)
		}
	}
}
