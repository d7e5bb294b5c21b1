package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A collapsing target (goodput falls above capacity) is found within the
// same band as a shedding one.
func TestCollapseCapacity(t *testing.T) {
	t.Parallel()
	const c = 300.0
	cfg := target.NewConfig(c)
	cfg.Model = target.Collapse
	_, tgts := builtin(t, cfg)
	l := fastLimits(governor.Rate, 5000, 40)
	l.Window = 600 * time.Millisecond // the collapse model meters arrivals over 1 s
	res := settled(t, Config{Targets: tgts, Limits: l}, 4)
	est := res.Capacity
	t.Logf("estimate %+v", est)
	if est.Windows < 3 {
		t.Fatalf("estimate rests on %d windows", est.Windows)
	}
	within(t, "goodput", est.Goodput, capacityBand*c, 1.08*c)
	if res.Counts.Classes[Class5xx] != res.Counts.Failed {
		t.Errorf("collapse fails with 500s: classes %v, failed %d", res.Counts.Classes, res.Counts.Failed)
	}
}

// A queueing target (excess waits up to 100 ms, then 503) is found within
// the band too: its failures start only once the queue overflows.
func TestQueueCapacity(t *testing.T) {
	t.Parallel()
	const c = 300.0
	cfg := target.NewConfig(c)
	cfg.Model = target.Queue
	_, tgts := builtin(t, cfg)
	res := settled(t, Config{Targets: tgts, Limits: fastLimits(governor.Rate, 5000, 40)}, 4)
	est := res.Capacity
	t.Logf("estimate %+v", est)
	if est.Windows < 3 {
		t.Fatalf("estimate rests on %d windows", est.Windows)
	}
	within(t, "goodput", est.Goodput, capacityBand*c, 1.08*c)
	if res.Counts.Classes[Class5xx] != res.Counts.Failed {
		t.Errorf("the queue fails with 503s: classes %v, failed %d", res.Counts.Classes, res.Counts.Failed)
	}
}

// Closed loop: a target that serves 6 requests at once, each in 10 ms, and
// fails the excess after the same 10 ms (a server that takes as long to
// fail as to succeed; one that sheds at once makes a closed loop spin on its
// rejections) settles the concurrency offer at 6. The capacity is the
// failures' alone: the governor judges on failed attempts (and the drain),
// not the latency knee. This target never queues, but it shares the CPU
// with the generator: on a loaded 2-core machine under the race detector its
// 10 ms answers took 17-27 ms at 2-6 in flight, an inflation the knee reads
// as queueing, and it backed off, with no failure, to 1-5.
func TestConcurrencyCapacity(t *testing.T) {
	t.Parallel()
	slots := make(chan struct{}, 6)
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			time.Sleep(10 * time.Millisecond)
			<-slots
		default:
			time.Sleep(10 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	l := fastLimits(governor.Concurrency, 200, 1)
	l.Window = 250 * time.Millisecond
	noKnee := governor.WithEvidence(governor.EvidenceAll &^ governor.EvidenceLatency)
	res := settled(t, Config{Targets: tgts, Limits: l, Governor: []governor.Option{noKnee}}, 3)
	est := res.Capacity
	t.Logf("estimate %+v, workers %d", est, res.Workers)
	if est.Windows < 2 {
		t.Fatalf("estimate rests on %d windows: %+v", est.Windows, res.Windows)
	}
	within(t, "settled concurrency", est.Offer, 5.5, 7)
	if res.Workers > 200 || res.Workers < 6 {
		t.Errorf("workers %d: the pool grows with the offer, never past the ceiling", res.Workers)
	}
	// Six slots of 10 ms serve at most 600/s. Below that the goodput is the
	// machine's speed, not the governor's behaviour: at load 19 on 2 cores
	// each 10 ms answer took 54 ms (112/s), under the 120/s floor this test
	// once had, so the floor is only that the settled windows served at all.
	if est.Goodput <= 0 || est.Goodput > 600 {
		t.Errorf("goodput %.1f/s: want some, and at most six slots' 600/s", est.Goodput)
	}
	if t.Failed() {
		logWindows(t, res)
	}
}

// logWindows logs a failed run's windows: what the governor saw and did.
func logWindows(t *testing.T, res *Result) {
	t.Helper()
	logWindowList(t, res.Start, res.Windows)
}

// logWindowList logs windows with their times from start.
func logWindowList(t *testing.T, start time.Time, windows []governor.Window) {
	t.Helper()
	for _, w := range windows {
		t.Logf("%4d-%4d ms offer %.1f ok %d failed %d frac %.3f (by %q) latency %v (baseline %v) saturated %v %s/%s -> %.1f",
			w.Start.Sub(start).Milliseconds(), w.End.Sub(start).Milliseconds(), w.Offer, w.OK, w.Failed,
			w.Frac, w.By, w.Latency, w.Baseline, w.GeneratorSaturated, w.Decision.Kind, w.Decision.Signal, w.Decision.Offer)
	}
}

// A target that dies mid-run (resetting connections) and recovers: the
// governor calls it an outage and holds the offer while it is down, the
// failures are resets, and the offer is near capacity once it is up. (Near: 70 %, since on a
// loaded machine the search can take a window or two longer.) Each step waits
// for the window that shows the last one happened, with testwait's deadline,
// instead of following a fixed timetable; the run is then interrupted.
func TestDiesAndRecovers(t *testing.T) {
	t.Parallel()
	const c = 400.0
	cfg := target.NewConfig(c)
	cfg.DownClose = true
	tg, tgts := builtin(t, cfg)
	l := fastLimits(governor.Rate, 5000, 100)
	l.Floor = 40
	l.Window = 500 * time.Millisecond

	var (
		mu      sync.Mutex
		windows []governor.Window
	)
	// seen waits for a closed window that began after since and passes ok.
	seen := func(what string, since time.Time, ok func(governor.Window) bool) time.Time {
		t.Helper()
		testwait.Until(t, testwait.Deadline, what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, w := range windows {
				if !w.Start.Before(since) && ok(w) {
					return true
				}
			}
			return false
		})
		return time.Now()
	}
	begin := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			logWindowList(t, begin, windows)
		}
	})
	stop := start(t, Config{Targets: tgts, Limits: l, Duration: 4 * testwait.Deadline,
		Observer: func(w governor.Window) { mu.Lock(); windows = append(windows, w); mu.Unlock() }})
	downAt := seen("a window near capacity", begin, func(w governor.Window) bool { return w.Offer >= 0.7*c })
	tg.SetDown(true)
	// Connections closed before any answer: an outage, not congestion. The
	// outage's windows hold the offer in force when it began (the last
	// decision before the first outage window, or what that decision's
	// back-off was when the outage undid it): no back-off, and nowhere near
	// the floor. That offer need not be near capacity: under load the window
	// near capacity the test waited for can itself breach on the shed
	// bursts of a late generator and back off (400 → 276/s) just before the
	// target goes down.
	var held, inForce float64
	upAt := seen("an outage window at the held offer while down", downAt, func(w governor.Window) bool {
		if w.Decision.Signal != governor.SignalOutage {
			return false
		}
		for i := range windows { // mu is held: seen's condition runs under it
			if windows[i].Start.Equal(w.Start) && i > 0 {
				held, inForce = w.Offer, windows[i-1].Decision.Offer
				return true
			}
		}
		return false
	})
	if held < inForce || held < 0.25*c {
		t.Fatalf("the outage held %v/s: want the %v/s in force when it began, and no back-off toward the %v/s floor", held, inForce, l.Floor)
	}
	tg.SetDown(false)
	seen("a clean window near capacity once up", upAt, func(w governor.Window) bool {
		return w.Offer >= 0.7*c && w.Frac <= l.High
	})
	res := stop()
	if res.Counts.Classes[ClassReset] == 0 {
		t.Errorf("a target resetting connections must show resets: %v", res.Counts.Classes)
	}
	if res.Counts.Classes[ClassRefused]+res.Counts.Classes[ClassTimeout] != 0 {
		t.Errorf("classes %v: nothing was refused or timed out", res.Counts.Classes)
	}
}

// A phase whose context ends mid-way stops at once and still returns its
// full result, marked interrupted.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	_, tgts := builtin(t, target.NewConfig(1000))
	l := fastLimits(governor.Rate, 200, 200)
	e, err := New(Config{Targets: tgts, Limits: l, Duration: time.Minute, Tick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Interrupted after 2 s: two windows and 100 ok attempts even at a
	// quarter of the pace; stopping "at once" allows a loaded machine 5 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := e.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.End.Sub(res.Start) > 7*time.Second {
		t.Fatalf("interrupted %v after %v", res.Interrupted, res.End.Sub(res.Start))
	}
	if len(res.Windows) < 2 || res.Counts.OK < 100 {
		t.Errorf("windows %d, ok %d: what ran before the interrupt must be kept", len(res.Windows), res.Counts.OK)
	}
	if _, err := e.Run(context.Background()); err == nil {
		t.Error("a second Run must fail")
	}
}

// Stopping waits for in-flight iterations within the grace period; Abort
// cuts the wait short, and aborted attempts are not the target's failures.
func TestGraceAndAbort(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{TransportFastHTTP, TransportEvLoop} {
		t.Run(tr, func(t *testing.T) { t.Parallel(); graceAndAbort(t, tr) })
	}
}

func graceAndAbort(t *testing.T, transport string) {
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	l := fastLimits(governor.Concurrency, 3, 3)
	// 250 ms: time for a loaded machine's three workers to send, and still
	// one request each, as each takes 300 ms.
	res := run(t, Config{Targets: slow, Limits: l, Fixed: true, Duration: 250 * time.Millisecond, Grace: testwait.Deadline, Transport: transport})
	if res.Counts.OK != 3 || res.Counts.Aborted != 0 {
		t.Errorf("in-flight iterations must finish within the grace: %+v", res.Counts)
	}

	var arrived atomic.Int64
	hang := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		<-r.Context().Done()
	}))
	e, err := New(Config{Targets: hang, Limits: l, Fixed: true, Duration: 100 * time.Millisecond, Grace: time.Minute, Timeout: time.Minute, Transport: transport})
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan *Result, 1)
	go func() {
		res, err := e.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		results <- res
	}()
	// Abort once all three hang and the phase is over, so the grace period
	// (a minute) has begun: it must end at once.
	testwait.Until(t, testwait.Deadline, "three attempts hanging", func() bool { return arrived.Load() >= 3 })
	testwait.Receive(t, e.Stopping(), "the phase to stop and its grace to begin")
	e.Abort()
	res = testwait.Receive(t, results, "Abort to end the minute's grace at once")
	if res == nil {
		t.Fatal("no result")
	}
	if res.Transport != transport || res.Counts.Aborted != 3 || res.Counts.Started != 3 || res.Counts.Failed != 0 || res.Counts.OK != 0 {
		t.Errorf("counts %+v: three aborted attempts, nothing resolved", res.Counts)
	}
}

// Arrivals that find every worker busy are dropped and counted.
func TestDropped(t *testing.T) {
	t.Parallel()
	for _, tr := range []string{TransportFastHTTP, TransportEvLoop} {
		t.Run(tr, func(t *testing.T) { t.Parallel(); dropped(t, tr) })
	}
}

func dropped(t *testing.T, transport string) {
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
	}))
	l := fastLimits(governor.Rate, 200, 200)
	res := run(t, Config{Targets: tgts, Limits: l, Fixed: true, MaxVUs: 2, Duration: 500 * time.Millisecond, Transport: transport})
	c := res.Counts
	if res.Workers != 2 || res.Transport != transport {
		t.Errorf("workers %d, bound 2 (%s)", res.Workers, res.Transport)
	}
	// Every arrival of the schedule (200/s for 0.5 s) was sent, dropped or
	// missed.
	if c.Started+c.Dropped+c.Missed != 100 || res.Arrivals != c.Started+c.Dropped {
		t.Errorf("counts %+v, %d arrivals: want the schedule's 100 accounted for", c, res.Arrivals)
	}
	// Two workers at 100 ms serve at most 12 of the ~100 arrivals (fewer
	// arrive when the machine is loaded and timers are late): most of them
	// are dropped.
	if c.OK > 20 || c.Dropped <= c.OK {
		t.Errorf("counts %+v: most arrivals must be dropped", c)
	}
}

// Timeouts, refused connections and failing statuses land in their
// classes, on either transport.
func TestTransportClasses(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { t.Parallel(); transportClasses(t, tr.http2, TransportFastHTTP) })
	}
	t.Run(TransportEvLoop, func(t *testing.T) { t.Parallel(); transportClasses(t, false, TransportEvLoop) })
}

// transportClasses runs the class cases on net/http (http2) or on the
// named HTTP/1.1 transport.
func transportClasses(t *testing.T, http2 bool, transport string) {
	l := fastLimits(governor.Concurrency, 2, 2)

	hang := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	res := run(t, Config{Targets: hang, Limits: l, Fixed: true, Duration: 300 * time.Millisecond, Timeout: 50 * time.Millisecond, HTTP2: http2, Transport: transport})
	if c := res.Counts; c.Failed == 0 || c.Classes[ClassTimeout] != c.Failed {
		t.Errorf("timeouts: %+v", c)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse("http://" + addr + "/")
	closed := []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
	res = run(t, Config{Targets: closed, Limits: l, Fixed: true, Duration: 100 * time.Millisecond, Tries: 2, HTTP2: http2, Transport: transport})
	if c := res.Counts; c.Failed == 0 || c.Classes[ClassRefused] != c.Failed || c.IterFailed == 0 || c.IterOK != 0 {
		t.Errorf("refused: %+v", c)
	}

	teapot := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(418) }))
	f, _ := ParseFailOn("418")
	res = run(t, Config{Targets: teapot, Limits: l, Fixed: true, Duration: 100 * time.Millisecond, FailOn: &f, HTTP2: http2, Transport: transport})
	if c := res.Counts; c.Failed == 0 || c.Classes[ClassOther] != c.Failed {
		t.Errorf("a failing 418 is class other: %+v", c)
	}

	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) }))
	res = run(t, Config{Targets: slow, Limits: l, Fixed: true, Duration: 200 * time.Millisecond, Slow: time.Millisecond, HTTP2: http2, Transport: transport})
	if c := res.Counts; c.Failed == 0 || c.Classes[ClassSlow] != c.Failed || c.OK != 0 {
		t.Errorf("--slow: every attempt outlived the budget: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1/")
	tg := []targets.Target{{Method: "GET", URL: u, Header: http.Header{}}}
	l := governor.NewLimits(governor.Rate, 10)
	for name, cfg := range map[string]Config{
		"no targets":     {Limits: l},
		"bad limits":     {Targets: tg, Limits: governor.NewLimits(governor.Rate, 0)},
		"negative vus":   {Targets: tg, Limits: l, MaxVUs: -1},
		"negative tries": {Targets: tg, Limits: l, Tries: -1},
		"negative tick":  {Targets: tg, Limits: l, Tick: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// With many targets (each a different wire request), every target is sent
// in turn. The run lasts until every target has been hit (a loaded machine may
// need longer than an idle one's fraction of a second), then is interrupted.
func TestManyTargets(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		sent atomic.Int64
	)
	tgts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		sent.Add(1)
	}))
	n := 128
	list := make([]targets.Target, n)
	for i := range list {
		u, _ := url.Parse(tgts[0].URL.String() + strconv.Itoa(i))
		list[i] = targets.Target{Method: "GET", URL: u, Header: http.Header{}}
	}
	stop := start(t, Config{Targets: list, Limits: fastLimits(governor.Concurrency, 1, 1), Fixed: true, Duration: 2 * testwait.Deadline})
	// One worker sends the next request only after the last one's answer:
	// once n+1 have arrived, n have been answered.
	testwait.Until(t, testwait.Deadline, fmt.Sprintf("%d requests", n+1), func() bool { return sent.Load() > int64(n) })
	res := stop()
	mu.Lock()
	defer mu.Unlock()
	if res.Counts.OK < uint64(n) || len(seen) != n {
		t.Errorf("%d ok attempts reached %d of %d targets", res.Counts.OK, len(seen), n)
	}
}
