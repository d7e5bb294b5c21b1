package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// second is one step of a backlog run: what the client saw resolve, and the
// evidence a host would report, over one second at offer x.
type second struct {
	ok, failed       float64
	meanLatency      float64 // seconds, over the attempts resolved in the step
	inFlight         float64 // started − resolved at the step's end
	dropped          float64 // in the step
	waiting, zombies float64 // on the server at the step's end
}

// steps runs b one second at a time at the offers given.
func steps(b *BacklogTarget, offers ...float64) []second {
	var out []second
	prev := b.Load()
	for i, x := range offers {
		ok, failed := serve(b, time.Duration(i)*time.Second, x)
		l := b.Load()
		s := second{ok: ok, failed: failed, dropped: float64(l.Dropped - prev.Dropped)}
		if ok+failed > 0 {
			s.meanLatency = (l.Latency - prev.Latency).Seconds() / (ok + failed)
		}
		s.inFlight = b.started - b.ok - b.failed
		s.waiting, s.zombies = b.Queued()
		out = append(out, s)
		prev = l
	}
	return out
}

func repeat(x float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestBacklogSpec(t *testing.T) {
	ok := BacklogSpec{Servers: 2, Service: 10 * time.Millisecond}
	if err := ok.Validate(); err != nil || ok.Capacity() != 200 {
		t.Fatalf("2 servers × 10 ms: %v, capacity %v", err, ok.Capacity())
	}
	for _, tc := range []struct {
		edit func(*BacklogSpec)
		want string
	}{
		{func(s *BacklogSpec) { s.Servers = 0 }, "servers"},
		{func(s *BacklogSpec) { s.Service = 0 }, "service time"},
		{func(s *BacklogSpec) { s.Depth = -1 }, "depth"},
		{func(s *BacklogSpec) { s.Timeout = -1 }, "timeout must be >= 0"},
		{func(s *BacklogSpec) { s.Timeout = 5 * time.Millisecond }, "must exceed the service time"},
		{func(s *BacklogSpec) { s.DropAbandoned = true }, "only when the client has a timeout"},
		{func(s *BacklogSpec) { s.MaxInFlight = -1 }, "max in flight"},
	} {
		s := ok
		tc.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: Validate() = %v, want one line naming %q", s, err, tc.want)
			continue
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: Backlog did not panic", s)
				}
			}()
			Backlog(s)
		}()
	}
}

// Up to capacity (2 servers × 10 ms = 200/s) nothing waits: every attempt
// takes the service time, nothing fails, nothing piles up.
func TestBacklogUpToCapacityNothingWaits(t *testing.T) {
	for _, x := range []float64{50, 199, 200} {
		b := Backlog(BacklogSpec{Servers: 2, Service: 10 * time.Millisecond})
		for i, s := range steps(b, repeat(x, 10)...) {
			if s.failed != 0 || !near(s.meanLatency, 0.010, 1e-9) || s.inFlight > x*0.010+1e-6 || s.waiting > 1e-6 {
				t.Fatalf("x=%v, second %d: %+v, want every attempt answered after 10 ms", x, i, s)
			}
			if i > 0 && !near(s.ok, x, 1e-6) {
				t.Fatalf("x=%v, second %d: %v ok, want all %v", x, i, s.ok, x)
			}
		}
		if l := b.Load(); l.Started != uint64(10*x) || l.Dropped != 0 {
			t.Fatalf("x=%v: load %+v", x, l)
		}
	}
}

// Above capacity nothing fails: the pool serves c per second, the queue and
// the client's in-flight attempts grow by x − c per second, and the mean
// latency of what is answered grows by (x − c)/x seconds per second (the
// attempts answered in a second arrived over c/x seconds, each waiting
// (x − c)/c longer than the one a second of arrivals before it).
func TestBacklogOverloadQueuesWithoutFailing(t *testing.T) {
	const c, x = 200.0, 300.0
	b := Backlog(BacklogSpec{Servers: 2, Service: 10 * time.Millisecond})
	ss := steps(b, repeat(x, 8)...)
	for i := 2; i < len(ss); i++ { // from the second full second of overload
		s, p := ss[i], ss[i-1]
		if s.failed != 0 || !near(s.ok, c, 1e-6) {
			t.Fatalf("second %d: %+v, want c = %v ok and none failed", i, s, c)
		}
		if !near(s.inFlight-p.inFlight, x-c, 1e-6) || !near(s.meanLatency-p.meanLatency, (x-c)/x, 1e-3) {
			t.Fatalf("second %d: in flight %v → %v, latency %v → %v; want +%v and +%v", i, p.inFlight, s.inFlight, p.meanLatency, s.meanLatency, x-c, (x-c)/x)
		}
	}
}

// The client's bound turns the excess into dropped arrivals: in flight
// stays at the bound (less what the pool serves in one slice: the bound is
// applied per slice), the pool still serves c, the latency levels off at
// about bound / c.
func TestBacklogClientBoundDrops(t *testing.T) {
	const c, x, bound = 200.0, 400.0, 100
	b := Backlog(BacklogSpec{Servers: 2, Service: 10 * time.Millisecond, MaxInFlight: bound})
	ss := steps(b, repeat(x, 6)...)
	for i, s := range ss[2:] {
		if s.failed != 0 || !near(s.ok, c, 1e-6) || !near(s.dropped, x-c, 1) || s.inFlight > bound || s.inFlight < bound-c*backlogSlice.Seconds()-1 {
			t.Fatalf("second %d: %+v, want %v ok, %v dropped, about %d in flight", i+2, s, c, x-c, bound)
		}
		if !near(s.meanLatency, bound/c, 0.1*bound/c) {
			t.Fatalf("second %d: mean latency %v, want about %v", i+2, s.meanLatency, bound/c)
		}
	}
}

// A full queue refuses the excess at once: once Depth attempts wait, the
// failure fraction is (x − c)/x, and the refusals take no time.
func TestBacklogDepthRefuses(t *testing.T) {
	const c, x, depth = 200.0, 400.0, 100
	b := Backlog(BacklogSpec{Servers: 2, Service: 10 * time.Millisecond, Depth: depth})
	ss := steps(b, repeat(x, 5)...)
	for i, s := range ss[1:] {
		if !near(s.ok, c, 1e-6) || !near(s.failed, x-c, 1e-6) || s.waiting > depth+1e-6 {
			t.Fatalf("second %d: %+v, want %v ok, %v refused, at most %d waiting", i+1, s, c, x-c, depth)
		}
		// The ok wait depth/c (+ service); the refused wait nothing.
		if want := c * (depth/c + 0.010) / x; !near(s.meanLatency, want, 0.03*want) {
			t.Fatalf("second %d: mean latency %v, want about %v", i+1, s.meanLatency, want)
		}
	}
}

// The zombie queue. One server of 10 ms (100/s), a client timeout of
// 500 ms, 2c for 6 s and then c/2. Dropping abandoned work, the server keeps
// serving c of the live attempts through the overload (the excess times
// out) and is clean again within a second of its end. Keeping it, every
// answer of the overload is soon for a client that has left: goodput falls
// to nothing, and after the overload the zombies are worked off at only
// c − c/2 per second while every new attempt waits behind them and times
// out: the backlog outlives the overload by seconds.
func TestBacklogZombiesOutliveTheOverload(t *testing.T) {
	const c = 100.0
	offers := append(repeat(2*c, 6), repeat(c/2, 6)...)
	spec := BacklogSpec{Servers: 1, Service: 10 * time.Millisecond, Timeout: 500 * time.Millisecond}

	spec.DropAbandoned = true
	drop := steps(Backlog(spec), offers...)
	for i := 1; i < 6; i++ {
		if s := drop[i]; !near(s.ok, c, 1e-6) || !near(s.failed, c, 1e-6) || s.zombies != 0 {
			t.Fatalf("dropping, overload second %d: %+v, want %v ok and the excess %v timed out", i, s, c, c)
		}
	}
	for i := 7; i < len(offers); i++ {
		if s := drop[i]; s.failed != 0 || !near(s.meanLatency, 0.010, 1e-9) {
			t.Fatalf("dropping, second %d after the overload: %+v, want clean", i-6, s)
		}
	}

	spec.DropAbandoned = false
	keep := steps(Backlog(spec), offers...)
	for i := 1; i < 6; i++ {
		s := keep[i]
		if i >= 2 && s.ok != 0 {
			t.Fatalf("zombies, overload second %d: %v ok, want none: the server works for clients that left", i, s.ok)
		}
		if i >= 2 && !near(s.failed, 2*c, 1e-6) {
			t.Fatalf("zombies, overload second %d: %v failed, want every attempt", i, s.failed)
		}
		if !near(s.zombies-keep[i-1].zombies, c, 2) {
			t.Fatalf("zombies, overload second %d: zombies %v → %v, want +%v (arrive 2c, served c)", i, keep[i-1].zombies, s.zombies, c)
		}
	}
	for i := 7; i < len(offers); i++ {
		s, p := keep[i], keep[i-1]
		if s.ok != 0 || !near(s.failed, c/2, 1e-6) {
			t.Fatalf("zombies, second %d after the overload: %+v, want every new attempt timed out", i-6, s)
		}
		if !near(p.zombies-s.zombies, c/2, 1e-6) {
			t.Fatalf("zombies, second %d after the overload: zombies %v → %v, want −%v a second", i-6, p.zombies, s.zombies, c/2)
		}
	}
}

// Serve cuts a step into slices of at most backlogSlice; how the run steps
// does not change the model.
func TestBacklogStepLengthDoesNotMatter(t *testing.T) {
	spec := BacklogSpec{Servers: 2, Service: 10 * time.Millisecond, Timeout: 300 * time.Millisecond, MaxInFlight: 80, Depth: 60}
	coarse, fine := Backlog(spec), Backlog(spec)
	var cok, cf, fok, ff float64
	for s := 0; s < 6; s++ {
		x := 150.0 * float64(s%3+1)
		ok, f := coarse.Serve(time.Duration(s)*time.Second, x, time.Second, nil)
		cok, cf = cok+ok, cf+f
		for k := 0; k < int(time.Second/backlogSlice); k++ {
			ok, f := fine.Serve(time.Duration(s)*time.Second+time.Duration(k)*backlogSlice, x, backlogSlice, nil)
			fok, ff = fok+ok, ff+f
		}
	}
	if !near(cok, fok, 1e-6) || !near(cf, ff, 1e-6) || coarse.Load() != fine.Load() {
		t.Fatalf("1 s steps: %v ok %v failed %+v; 10 ms steps: %v ok %v failed %+v", cok, cf, coarse.Load(), fok, ff, fine.Load())
	}
}

// loadProbe is a controller at a fixed offer that reads the run's counters
// as the governor would, Load included when they offer it.
type loadProbe struct {
	offer  float64
	c      governor.Counters
	loads  []governor.Load
	counts [][2]uint64
}

func (p *loadProbe) Name() string { return "probe" }
func (p *loadProbe) Begin(_ time.Time, c governor.Counters) (float64, error) {
	p.c = c
	return p.offer, nil
}
func (p *loadProbe) Tick(time.Time) float64 {
	ok, failed := p.c.Attempts()
	p.counts = append(p.counts, [2]uint64{ok, failed})
	if lc, isLoad := p.c.(governor.LoadCounters); isLoad {
		p.loads = append(p.loads, lc.Load())
	}
	return p.offer
}
func (p *loadProbe) Windows() []governor.Window { return nil }

// Run hands a controller the backlog's evidence through
// governor.LoadCounters: at 1.5 c with nothing failing, in flight
// (Started − resolved) grows by x − c every second and the window's mean
// latency rises. A target without evidence gets plain Counters.
func TestRunHandsBacklogEvidenceToTheController(t *testing.T) {
	const c, x = 200.0, 300.0
	p := &loadProbe{offer: x}
	if _, err := Run(p, Backlog(BacklogSpec{Servers: 2, Service: 10 * time.Millisecond}), For(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(p.loads) != 6 {
		t.Fatalf("%d Load reads in 6 ticks, want 6", len(p.loads))
	}
	var prevFlight uint64
	var prevLat float64
	for i := 1; i < len(p.loads); i++ {
		l, n, pn := p.loads[i], p.counts[i], p.counts[i-1]
		if n[1] != 0 {
			t.Fatalf("tick %d: %d failed", i, n[1])
		}
		flight := l.Started - n[0] - n[1]
		resolved := float64(n[0] - pn[0])
		lat := (l.Latency - p.loads[i-1].Latency).Seconds() / resolved
		if i > 1 && (!near(float64(flight-prevFlight), x-c, 1) || lat <= prevLat) {
			t.Fatalf("tick %d: in flight %d → %d, mean latency %v → %v; want +%v and rising", i, prevFlight, flight, prevLat, lat, x-c)
		}
		prevFlight, prevLat = flight, lat
	}

	plain := &loadProbe{offer: x}
	if _, err := Run(plain, Shed(c), For(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(plain.loads) != 0 {
		t.Fatal("a target without evidence handed the controller LoadCounters")
	}
}

// The queueing models are the report's, not the bars': Models stays as the
// bars know it and ReportModels adds them at the end.
func TestQueueingModels(t *testing.T) {
	const c = 1300.0
	bars, report := Models(c, time.Hour), ReportModels(c, time.Hour)
	q := QueueingModels(c)
	if len(report) != len(bars)+len(q) {
		t.Fatalf("ReportModels has %d models, want %d + %d", len(report), len(bars), len(q))
	}
	for i, m := range q {
		if report[len(bars)+i].Name != m.Name || !strings.HasPrefix(m.Name, "backlog") || !near(m.C, c, 1e-3) {
			t.Errorf("queueing model %d: %q, C %v", i, m.Name, m.C)
		}
		if _, isLoad := m.New().(LoadTarget); !isLoad {
			t.Errorf("%s: not a LoadTarget", m.Name)
		}
	}
	for _, m := range bars {
		if strings.HasPrefix(m.Name, "backlog") {
			t.Errorf("Models has %q: the failure-only bars would range over it", m.Name)
		}
	}
}

// BenchmarkBacklogSecond is the cost of one simulated second of a loaded
// backlog, the unit of a report's run.
func BenchmarkBacklogSecond(b *testing.B) {
	m := Backlog(BacklogSpec{Servers: 2, Service: 2 * time.Millisecond, Timeout: 500 * time.Millisecond, MaxInFlight: 1000, Depth: 2048})
	for i := 0; i < b.N; i++ {
		m.Serve(time.Duration(i)*time.Second, 1500, time.Second, nil)
	}
}
