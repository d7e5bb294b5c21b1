package target

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/internal/testwait"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type result struct {
	code int
	at   time.Time
}

// fixture is a target on a fake clock with helpers to send requests.
type fixture struct {
	tb testing.TB
	fc *clock.Fake
	t  *Target
}

func newFixture(tb testing.TB, cfg Config) *fixture {
	tb.Helper()
	fc := clock.NewFake(t0)
	tg, err := New(cfg, WithClock(fc))
	if err != nil {
		tb.Fatal(err)
	}
	return &fixture{tb: tb, fc: fc, t: tg}
}

// send starts one request and returns where its answer will arrive, with the
// fake time it arrived at.
func (f *fixture) send() <-chan result {
	ch := make(chan result, 1)
	go func() {
		rec := httptest.NewRecorder()
		f.t.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		ch <- result{rec.Code, f.fc.Now()}
	}()
	return ch
}

// now sends one request that must be answered without the clock moving.
func (f *fixture) now() int {
	f.tb.Helper()
	select {
	case r := <-f.send():
		return r.code
	case <-time.After(testwait.Deadline):
		f.tb.Fatal("request did not finish without the clock moving")
		return 0
	}
}

// parked sends one request and returns once it waits on the clock (the fake
// has n pending timers).
func (f *fixture) parked(n int) <-chan result {
	f.tb.Helper()
	ch := f.send()
	f.waiters(n)
	return ch
}

func (f *fixture) waiters(n int) {
	f.tb.Helper()
	deadline := time.Now().Add(testwait.Deadline)
	for f.fc.Waiters() != n {
		if time.Now().After(deadline) {
			f.tb.Fatalf("fake clock has %d waiters, want %d", f.fc.Waiters(), n)
		}
		time.Sleep(50 * time.Microsecond) // polling a goroutine's progress, not timing logic
	}
}

// serving waits until n requests are in their service time and the fake
// clock has timers pending.
func (f *fixture) serving(n int64, timers int) {
	f.tb.Helper()
	deadline := time.Now().Add(testwait.Deadline)
	for f.t.Stats().Serving != n || f.fc.Waiters() != timers {
		if time.Now().After(deadline) {
			f.tb.Fatalf("serving %d with %d timers, want %d with %d", f.t.Stats().Serving, f.fc.Waiters(), n, timers)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func recv(tb testing.TB, ch <-chan result) result {
	tb.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(testwait.Deadline):
		tb.Fatal("request never finished")
		return result{}
	}
}

// drive sends requests at a fixed spacing for n arrivals (each answered at
// once: latency 0) and returns how many got each status.
func (f *fixture) drive(spacing time.Duration, n int) map[int]int {
	f.tb.Helper()
	got := map[int]int{}
	for i := 0; i < n; i++ {
		got[f.now()]++
		f.fc.Advance(spacing)
	}
	return got
}

func TestParseModel(t *testing.T) {
	for in, want := range map[string]Model{"shed": Shed, "Queue": Queue, " collapse ": Collapse} {
		got, err := ParseModel(in)
		if err != nil || got != want {
			t.Errorf("ParseModel(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != strings.ToLower(strings.TrimSpace(in)) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := ParseModel("drop"); err == nil || !strings.Contains(err.Error(), `"drop"`) {
		t.Errorf("ParseModel(drop) error = %v, want one naming the value", err)
	}
	var m Model
	if err := m.Set("collapse"); err != nil || m != Collapse || m.Type() != "model" {
		t.Errorf("Set(collapse) = %v, model %v", err, m)
	}
	if err := m.Set(""); err == nil || m != Collapse {
		t.Errorf("Set(\"\") = %v and changed the model to %v", err, m)
	}
}

func TestValidate(t *testing.T) {
	ok := NewConfig(800)
	if err := ok.Validate(); err != nil {
		t.Fatalf("NewConfig(800) does not validate: %v", err)
	}
	if ok.QueueDepth != 80 || ok.QueueTimeout != DefaultQueueTimeout || ok.Latency != DefaultLatency {
		t.Errorf("NewConfig defaults = %+v", ok)
	}
	cases := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"zero capacity", func(c *Config) { c.Capacity = 0 }, "capacity"},
		{"negative capacity", func(c *Config) { c.Capacity = -3 }, "capacity"},
		{"NaN capacity", func(c *Config) { c.Capacity = math.NaN() }, "capacity"},
		{"infinite capacity", func(c *Config) { c.Capacity = math.Inf(1) }, "capacity"},
		{"fractional concurrency", func(c *Config) { c.Concurrent, c.Capacity = true, 2.5 }, "whole number"},
		{"unknown model", func(c *Config) { c.Model = 7 }, "model"},
		{"negative latency", func(c *Config) { c.Latency = -time.Second }, "latency"},
		{"negative burst", func(c *Config) { c.Burst = -time.Second }, "burst"},
		{"negative depth", func(c *Config) { c.QueueDepth = -1 }, "queue depth"},
		{"negative timeout", func(c *Config) { c.QueueTimeout = -1 }, "queue timeout"},
		{"queue without depth", func(c *Config) { c.Model, c.QueueDepth = Queue, 0 }, "queue depth"},
		{"queue without timeout", func(c *Config) { c.Model, c.QueueTimeout = Queue, 0 }, "queue timeout"},
	}
	for _, tc := range cases {
		c := NewConfig(800)
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.field)
		}
		if _, nerr := New(c); nerr == nil {
			t.Errorf("%s: New accepted an invalid config", tc.name)
		}
	}
}

func TestConfigString(t *testing.T) {
	c := NewConfig(800)
	if got, want := c.String(), "built-in shed target: capacity 800 req/s, latency 5ms"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	c.Model, c.Concurrent, c.Capacity = Queue, true, 8
	if got, want := c.String(), "built-in queue target: capacity 8 concurrent, latency 5ms, queue 80 for 100ms"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func rateConfig(model Model, capacity float64) Config {
	c := NewConfig(capacity)
	c.Model, c.Latency, c.Burst = model, 0, 0
	return c
}

// At offer x above capacity c, shedding answers (x − c)/x of the arrivals 503.
func TestShedRateExact(t *testing.T) {
	f := newFixture(t, rateConfig(Shed, 4))
	got := f.drive(62500*time.Microsecond, 160) // 16/s for 10 s
	if got[200] != 40 || got[503] != 120 {
		t.Fatalf("16/s against 4/s for 10 s: %v, want 40 ok and 120 shed", got)
	}
	s := f.t.Stats()
	if s.Arrivals != 160 || s.OK != 40 || s.Shed != 120 || s.ByStatus[200] != 40 || s.ByStatus[503] != 120 || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestShedRateBelowCapacityIsClean(t *testing.T) {
	f := newFixture(t, rateConfig(Shed, 4))
	if got := f.drive(250*time.Millisecond, 40); got[200] != 40 {
		t.Fatalf("4/s against 4/s: %v, want every request ok", got)
	}
}

func TestShedRateBurst(t *testing.T) {
	c := rateConfig(Shed, 100)
	c.Burst = 50 * time.Millisecond // 5 tokens
	f := newFixture(t, c)
	got := map[int]int{}
	for i := 0; i < 10; i++ {
		got[f.now()]++
	}
	if got[200] != 5 || got[503] != 5 {
		t.Fatalf("10 at once against a 5-token bucket: %v", got)
	}
	f.fc.Advance(20 * time.Millisecond) // 2 tokens back
	if a, b, c := f.now(), f.now(), f.now(); a != 200 || b != 200 || c != 503 {
		t.Fatalf("after 20 ms at 100/s: %d %d %d, want two ok then shed", a, b, c)
	}
}

func TestShedConcurrent(t *testing.T) {
	c := NewConfig(2)
	c.Concurrent, c.Latency = true, 100*time.Millisecond
	f := newFixture(t, c)
	a, b := f.parked(1), f.parked(2)
	if code := f.now(); code != 503 {
		t.Fatalf("third request with 2 in service: %d, want 503", code)
	}
	f.fc.Advance(100 * time.Millisecond)
	if ra, rb := recv(t, a), recv(t, b); ra.code != 200 || rb.code != 200 || !ra.at.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("in-service requests: %+v %+v", ra, rb)
	}
	d := f.parked(1) // a slot is free again
	f.fc.Advance(100 * time.Millisecond)
	if r := recv(t, d); r.code != 200 {
		t.Fatalf("after the slots freed: %d", r.code)
	}
}

// The queue model in rate mode: a request waits for its reserved token,
// one that would wait past the timeout holds its place until then and fails,
// and one that finds the queue full fails at once.
func TestQueueRate(t *testing.T) {
	c := rateConfig(Queue, 4) // a token every 250 ms
	c.QueueDepth, c.QueueTimeout = 3, 600*time.Millisecond
	f := newFixture(t, c)
	if code := f.now(); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	r2 := f.parked(1) // waits 250 ms for the next token
	r3 := f.parked(2) // 500 ms
	r4 := f.parked(3) // would wait 750 ms > 600 ms: expires
	if code := f.now(); code != 503 {
		t.Fatalf("request with a full queue: %d, want 503 at once", code)
	}
	if s := f.t.Stats(); s.Queued != 3 || s.InFlight != 3 {
		t.Fatalf("while waiting: %+v", s)
	}
	f.fc.Advance(time.Second)
	for i, tc := range []struct {
		ch   <-chan result
		code int
	}{{r2, 200}, {r3, 200}, {r4, 503}} {
		if r := recv(t, tc.ch); r.code != tc.code {
			t.Errorf("request %d: %d, want %d", i+2, r.code, tc.code)
		}
	}
	s := f.t.Stats()
	if s.OK != 3 || s.Shed != 1 || s.Expired != 1 || s.Queued != 0 || s.ByStatus[503] != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// Queue waits are exact on the fake clock: a request reserved for 250 ms is
// answered when the clock reaches it, not before.
func TestQueueRateWaitIsExact(t *testing.T) {
	c := rateConfig(Queue, 4)
	c.QueueDepth, c.QueueTimeout = 1, time.Second
	f := newFixture(t, c)
	f.now()
	r := f.parked(1)
	f.fc.Advance(249 * time.Millisecond)
	select {
	case got := <-r:
		t.Fatalf("answered %d before its token came", got.code)
	default:
	}
	f.fc.Advance(time.Millisecond)
	if got := recv(t, r); got.code != 200 || !got.at.Equal(t0.Add(250*time.Millisecond)) {
		t.Fatalf("queued request: %+v, want 200 at +250ms", got)
	}
}

// A reservation whose wait rounds to nothing still gives its queue place
// back.
func TestQueueRateTinyWait(t *testing.T) {
	c := rateConfig(Queue, 1e12)
	c.QueueDepth, c.QueueTimeout = 1, time.Second
	f := newFixture(t, c)
	for i := 0; i < 3; i++ {
		if code := f.now(); code != 200 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	if s := f.t.Stats(); s.Queued != 0 || s.OK != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestQueueConcurrent(t *testing.T) {
	c := NewConfig(1)
	c.Concurrent, c.Model = true, Queue
	c.Latency, c.QueueDepth, c.QueueTimeout = 100*time.Millisecond, 1, 150*time.Millisecond
	f := newFixture(t, c)
	a := f.parked(1) // in service until 100 ms
	b := f.parked(2) // queued, gives up at 150 ms
	if code := f.now(); code != 503 {
		t.Fatalf("with the queue full: %d", code)
	}
	f.fc.Advance(100 * time.Millisecond) // a done; b takes the slot, served until 200 ms
	if r := recv(t, a); r.code != 200 {
		t.Fatalf("first: %+v", r)
	}
	f.serving(1, 1) // b in service, on its service timer
	f.fc.Advance(100 * time.Millisecond)
	if r := recv(t, b); r.code != 200 || !r.at.Equal(t0.Add(200*time.Millisecond)) {
		t.Fatalf("queued: %+v, want 200 at +200ms", r)
	}

	// A slow service: the queued request times out.
	f.t.SetLatency(time.Second)
	slow := f.parked(1)
	late := f.parked(2)
	f.fc.Advance(150 * time.Millisecond)
	if r := recv(t, late); r.code != 503 {
		t.Fatalf("queued past its timeout: %d", r.code)
	}
	f.fc.Advance(850 * time.Millisecond)
	if r := recv(t, slow); r.code != 200 {
		t.Fatalf("slow request: %d", r.code)
	}
	if s := f.t.Stats(); s.OK != 3 || s.Shed != 1 || s.Expired != 1 || s.Queued != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// goodput is the collapse curve of docs/design.md.
func goodput(c, x float64) float64 { return math.Max(0, c*(1-(x-c)/(2*c))) }

func TestCollapseRateFollowsTheCurve(t *testing.T) {
	const c = 16.0
	for _, x := range []float64{16, 32, 40, 64} {
		f := newFixture(t, rateConfig(Collapse, c))
		spacing := time.Duration(float64(time.Second) / x)
		f.drive(spacing, int(x)) // the first second warms the rate meter
		got := f.drive(spacing, 10*int(x))
		want := 10 * goodput(c, x)
		if math.Abs(float64(got[200])-want) > 1 {
			t.Errorf("x=%v: %d ok in 10 s, want %v ± 1", x, got[200], want)
		}
		if got[200]+got[500] != 10*int(x) {
			t.Errorf("x=%v: %v, want every failure a 500", x, got)
		}
	}
}

func TestCollapseConcurrent(t *testing.T) {
	c := NewConfig(2)
	c.Concurrent, c.Model, c.Latency = true, Collapse, 100*time.Millisecond
	f := newFixture(t, c)
	var chans []<-chan result
	for i := 1; i <= 4; i++ {
		chans = append(chans, f.parked(i))
	}
	f.fc.Advance(100 * time.Millisecond)
	// In flight 1 and 2: ok. 3: p = goodput(2,3)/3 = 0.5. 4: p = 1/4. The
	// accumulator (0.5, then 0.75) fails both.
	want := []int{200, 200, 500, 500}
	for i, ch := range chans {
		if r := recv(t, ch); r.code != want[i] {
			t.Errorf("request %d: %d, want %d", i+1, r.code, want[i])
		}
	}
	if s := f.t.Stats(); s.Collapsed != 2 || s.ByStatus[500] != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestSetCapacity(t *testing.T) {
	f := newFixture(t, rateConfig(Shed, 4))
	before := f.drive(62500*time.Microsecond, 16)
	if err := f.t.SetCapacity(8); err != nil {
		t.Fatal(err)
	}
	after := f.drive(62500*time.Microsecond, 16)
	if before[200] != 4 || after[200] != 8 {
		t.Fatalf("ok per second at 4/s then 8/s: %d, %d", before[200], after[200])
	}
	if f.t.Stats().Capacity != 8 {
		t.Errorf("Stats().Capacity = %v", f.t.Stats().Capacity)
	}
	for _, bad := range []float64{0, -1, math.NaN()} {
		if err := f.t.SetCapacity(bad); err == nil {
			t.Errorf("SetCapacity(%v) accepted", bad)
		}
	}
}

func TestSetCapacityGrantsWaiters(t *testing.T) {
	c := NewConfig(1)
	c.Concurrent, c.Model = true, Queue
	c.Latency, c.QueueDepth, c.QueueTimeout = time.Second, 1, time.Second
	f := newFixture(t, c)
	f.parked(1)
	queued := f.parked(2)
	if err := f.t.SetCapacity(2); err != nil {
		t.Fatal(err)
	}
	// queued got the new slot: it now waits on its service timer while its
	// queue timer has stopped.
	f.serving(2, 2)
	if s := f.t.Stats(); s.Queued != 0 {
		t.Fatalf("after growing: %+v", s)
	}
	if err := f.t.SetCapacity(1.5); err == nil {
		t.Error("fractional concurrency accepted")
	}
	f.fc.Advance(time.Second)
	if r := recv(t, queued); r.code != 200 {
		t.Fatalf("granted request: %d", r.code)
	}
}

func TestSetDown(t *testing.T) {
	f := newFixture(t, rateConfig(Shed, 100))
	f.t.SetDown(true)
	if code := f.now(); code != 503 {
		t.Fatalf("down: %d", code)
	}
	f.t.SetDown(false)
	if code := f.now(); code != 200 {
		t.Fatalf("recovered: %d", code)
	}
	if s := f.t.Stats(); s.Down != 1 || s.OK != 1 || s.ByStatus[503] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCanceledWhileQueued(t *testing.T) {
	c := rateConfig(Queue, 1)
	c.QueueDepth, c.QueueTimeout = 1, 10*time.Second
	f := newFixture(t, c)
	f.now()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	ctx, cancel := context.WithCancel(req.Context())
	done := make(chan struct{})
	go func() {
		f.t.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
		close(done)
	}()
	f.waiters(1)
	cancel()
	<-done
	if s := f.t.Stats(); s.Canceled != 1 || s.Queued != 0 || s.InFlight != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRateMeter(t *testing.T) {
	m := rateMeter{epoch: t0}
	// 5 arrivals per 100 ms bucket for 2 s: 50/s once a full second is seen.
	var last float64
	for i := 0; i < 100; i++ {
		last = m.observe(t0.Add(time.Duration(i) * 20 * time.Millisecond))
	}
	if last != 50 {
		t.Fatalf("steady 50/s measured %v", last)
	}
	// A silence longer than the ring clears it.
	if got := m.observe(t0.Add(10 * time.Second)); got != 0 {
		t.Fatalf("after 8 s of silence: %v", got)
	}
}

// BenchmarkServeHTTP measures the handler's own cost per request (no
// network, no service time, a capacity it never reaches) from parallel
// callers: the target must never be what limits a loopback benchmark.
func BenchmarkServeHTTP(b *testing.B) {
	for _, model := range []Model{Shed, Collapse} {
		b.Run(model.String(), func(b *testing.B) {
			cfg := rateConfig(model, 1e6)
			tg, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tg.ServeHTTP(httptest.NewRecorder(), req)
				}
			})
		})
	}
}

// FuzzParseModel: any input either names a model, which prints back as a
// name that parses to the same model, or is one clear error quoting it.
func FuzzParseModel(f *testing.F) {
	for _, s := range []string{"shed", "QUEUE", " collapse\t", "", "shedd", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseModel(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "unknown model ") {
				t.Fatalf("ParseModel(%q) error %q", s, err)
			}
			return
		}
		if back, err := ParseModel(m.String()); err != nil || back != m {
			t.Fatalf("%q parsed to %v, which prints as %q and parses back to %v, %v", s, m, m.String(), back, err)
		}
	})
}
