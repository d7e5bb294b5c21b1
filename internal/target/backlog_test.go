package target

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

func backlogConfig(servers int, service time.Duration, depth int) Config {
	c := NewConfig(float64(servers))
	c.Model, c.Concurrent, c.Latency, c.QueueDepth = Backlog, true, service, depth
	return c
}

// queued waits until n requests wait in the target's queue (backlog waits
// have no timer, so the fake clock cannot tell).
func (f *fixture) queued(n int64) {
	f.tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.t.Stats().Queued != n {
		if time.Now().After(deadline) {
			f.tb.Fatalf("%d queued, want %d", f.t.Stats().Queued, n)
		}
		time.Sleep(50 * time.Microsecond) // polling a goroutine's progress, not timing logic
	}
}

// sendCtx starts one request with its own context, as a client that may
// give up.
func (f *fixture) sendCtx(ctx context.Context) <-chan result {
	ch := make(chan result, 1)
	go func() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
		f.t.ServeHTTP(rec, req)
		ch <- result{rec.Code, f.fc.Now()}
	}()
	return ch
}

func TestBacklogConfig(t *testing.T) {
	c := backlogConfig(2, 10*time.Millisecond, DefaultBacklogDepth)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.PerSecond(); got != 200 {
		t.Errorf("PerSecond() = %v, want 2 servers / 10 ms = 200", got)
	}
	if got, want := c.String(), "built-in backlog target: capacity 200 req/s (2 servers × 10ms), queue 2048, abandoned requests still served"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	c.DropAbandoned = true
	if !strings.HasSuffix(c.String(), "abandoned requests dropped") {
		t.Errorf("String() with DropAbandoned = %q", c.String())
	}
	if r := NewConfig(800); r.PerSecond() != 800 {
		t.Errorf("rate mode PerSecond() = %v", r.PerSecond())
	}
	if z := (Config{Capacity: 4, Concurrent: true}); z.PerSecond() != 0 {
		t.Errorf("concurrent without latency PerSecond() = %v, want 0 (unbounded)", z.PerSecond())
	}
	if m, err := ParseModel("Backlog"); err != nil || m != Backlog || m.String() != "backlog" {
		t.Errorf("ParseModel(Backlog) = %v, %v", m, err)
	}
	if _, err := ParseModel("drop"); err == nil || !strings.Contains(err.Error(), "shed, queue, collapse or backlog") {
		t.Errorf("ParseModel(drop) error = %v, want the list of models", err)
	}

	cases := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"rate mode", func(c *Config) { c.Concurrent = false }, "Concurrent"},
		{"no service time", func(c *Config) { c.Latency = 0 }, "latency"},
		{"no queue", func(c *Config) { c.QueueDepth = 0 }, "queue depth"},
		{"fractional servers", func(c *Config) { c.Capacity = 1.5 }, "whole number"},
		{"drop on another model", func(c *Config) { c.Model, c.DropAbandoned = Queue, true }, "backlog model only"},
		{"model past the last", func(c *Config) { c.Model = Backlog + 1 }, "unknown model"},
	}
	for _, tc := range cases {
		c := backlogConfig(2, 10*time.Millisecond, 8)
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Validate() = %v, want one line naming %q", tc.name, err, tc.field)
		}
	}
}

// Two servers of 100 ms behind a queue of 3: everyone admitted is answered
// 200, each pair 100 ms after the one before (latency grows with the
// queue), and the request that finds the queue full is answered 503 at once.
func TestBacklogServesEveryoneLater(t *testing.T) {
	f := newFixture(t, backlogConfig(2, 100*time.Millisecond, 3))
	var chans []<-chan result
	chans = append(chans, f.parked(1), f.parked(2)) // in service
	for i := int64(1); i <= 3; i++ {
		chans = append(chans, f.send())
		f.queued(i)
	}
	if code := f.now(); code != http.StatusServiceUnavailable {
		t.Fatalf("with the backlog full: %d, want 503", code)
	}
	if s := f.t.Stats(); s.InFlight != 5 || s.Queued != 3 || s.Serving != 2 {
		t.Fatalf("while queued: %+v", s)
	}
	want := []time.Duration{100, 100, 200, 200, 300}
	for step := 1; step <= 3; step++ {
		f.fc.Advance(100 * time.Millisecond)
		for i, ch := range chans {
			if want[i] != time.Duration(step)*100 {
				continue
			}
			if r := recv(t, ch); r.code != 200 || !r.at.Equal(t0.Add(want[i]*time.Millisecond)) {
				t.Fatalf("request %d: %+v, want 200 at +%dms", i+1, r, want[i])
			}
		}
		if step < 3 {
			f.serving(int64(min(2, 5-2*step)), int(min(2, 5-2*step))) // the next ones took the servers
		}
	}
	s := f.t.Stats()
	if s.OK != 5 || s.Shed != 1 || s.Expired != 0 || s.InFlight != 0 || s.Queued != 0 || s.ByStatus[200] != 5 || s.ByStatus[503] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// The zombie queue: one server of 100 ms; a, then b and c queued. b's client
// gives up while it waits. By default b stays in the queue and takes the
// server from 100 ms to 200 ms for nobody, so c is answered at 300 ms; with
// DropAbandoned b leaves at once and c is answered at 200 ms.
func TestBacklogAbandonedWork(t *testing.T) {
	for _, drop := range []bool{false, true} {
		cfg := backlogConfig(1, 100*time.Millisecond, 10)
		cfg.DropAbandoned = drop
		f := newFixture(t, cfg)
		a := f.parked(1)
		ctx, cancel := context.WithCancel(context.Background())
		b := f.sendCtx(ctx)
		f.queued(1)
		c := f.send()
		f.queued(2)
		cancel()
		if drop {
			if r := recv(t, b); r.code != 200 { // the recorder's default: nothing was written
				t.Fatalf("drop: abandoned request answered %d", r.code)
			}
			f.queued(1)
		}
		f.fc.Advance(100 * time.Millisecond)
		if r := recv(t, a); r.code != 200 {
			t.Fatalf("drop=%v: a: %+v", drop, r)
		}
		f.serving(1, 1) // b (a zombie) or c holds the server
		f.fc.Advance(100 * time.Millisecond)
		cAt := 300 * time.Millisecond
		if drop {
			cAt = 200 * time.Millisecond
		} else {
			recv(t, b)
			if s := f.t.Stats(); s.Zombies != 1 || s.Canceled != 1 || s.OK != 1 {
				t.Fatalf("after the zombie's service: %+v", s)
			}
			f.serving(1, 1)
			f.fc.Advance(100 * time.Millisecond)
		}
		if r := recv(t, c); r.code != 200 || !r.at.Equal(t0.Add(cAt)) {
			t.Fatalf("drop=%v: c: %+v, want 200 at +%v", drop, r, cAt)
		}
		s := f.t.Stats()
		wantZombies := uint64(1)
		if drop {
			wantZombies = 0
		}
		if s.OK != 2 || s.Canceled != 1 || s.Zombies != wantZombies || s.InFlight != 0 || s.Queued != 0 {
			t.Fatalf("drop=%v: stats %+v", drop, s)
		}
	}
}

// A client that leaves mid-service: a zombie server finishes the work, one
// that drops abandoned work stops at once and frees the server.
func TestBacklogAbandonedInService(t *testing.T) {
	for _, drop := range []bool{false, true} {
		cfg := backlogConfig(1, 100*time.Millisecond, 10)
		cfg.DropAbandoned = drop
		f := newFixture(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		a := f.sendCtx(ctx)
		f.serving(1, 1)
		cancel()
		if drop {
			recv(t, a)
			if s := f.t.Stats(); s.Serving != 0 || s.Canceled != 1 || s.Zombies != 0 {
				t.Fatalf("drop: %+v", s)
			}
			continue
		}
		f.fc.Advance(100 * time.Millisecond)
		if r := recv(t, a); !r.at.Equal(t0.Add(100 * time.Millisecond)) {
			t.Fatalf("zombie finished at %v", r.at)
		}
		if s := f.t.Stats(); s.Canceled != 1 || s.Zombies != 1 || s.OK != 0 {
			t.Fatalf("zombie: %+v", s)
		}
	}
}

// Over real HTTP with a client timeout shorter than the queue: the clients
// that give up leave zombies behind, which the server still works off, and
// the server ends with nothing in flight. Bounds are loose: a slow machine
// only makes more clients give up. The drain is judged on the requests the
// server saw (Arrivals), not on the clients: on a loaded machine a client
// can give up before its request reaches the server at all, and such a
// request is never the server's to finish.
func TestBacklogZombiesOverHTTP(t *testing.T) {
	tg, err := New(backlogConfig(1, 40*time.Millisecond, 100))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tg)
	defer srv.Close()
	client := &http.Client{Timeout: 100 * time.Millisecond}
	defer client.CloseIdleConnections()
	const n = 12 // 480 ms of work for one server: most clients give up
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = get(client, srv.URL)
		}()
	}
	wg.Wait()
	testwait.Until(t, testwait.Deadline, "the backlog to drain", func() bool {
		s := tg.Stats()
		return s.Arrivals > 0 && s.InFlight == 0 && s.OK+s.Canceled == s.Arrivals
	})
	if s := tg.Stats(); s.Zombies == 0 || s.Zombies != s.Canceled || s.Shed != 0 {
		t.Fatalf("after the backlog drained: %+v, want every abandoned request served as a zombie", s)
	}
}

// A grant that reaches its request late does not delay it: one server of
// 100 ms with a and b queued behind it; the clock jumps to 250 ms at once
// (a busy machine, a late timer). b's slot was its own from 100 ms, so b
// ends at once, and c, whose slot is its own from 200 ms, ends at 300 ms:
// the server keeps its capacity of one request per 100 ms.
func TestBacklogScheduleDoesNotDrift(t *testing.T) {
	f := newFixture(t, backlogConfig(1, 100*time.Millisecond, 10))
	a := f.parked(1)
	b := f.send()
	f.queued(1)
	c := f.send()
	f.queued(2)
	f.fc.Advance(250 * time.Millisecond)
	for name, ch := range map[string]<-chan result{"a": a, "b": b} {
		if r := recv(t, ch); r.code != 200 || !r.at.Equal(t0.Add(250*time.Millisecond)) {
			t.Fatalf("%s: %+v, want 200 at +250ms", name, r)
		}
	}
	f.serving(1, 1)
	f.fc.Advance(49 * time.Millisecond)
	select {
	case r := <-c:
		t.Fatalf("c answered early: %+v", r)
	default:
	}
	f.fc.Advance(time.Millisecond)
	if r := recv(t, c); r.code != 200 || !r.at.Equal(t0.Add(300*time.Millisecond)) {
		t.Fatalf("c: %+v, want 200 at +300ms", r)
	}
}
