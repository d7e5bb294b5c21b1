package agent

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/targets"
	"github.com/throttlekit/throttle/internal/testwait"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}

const testToken = "s3cret-token"

// lines is a slog handler that keeps every record as "msg k=v ...".
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, strings.TrimSpace(string(p)))
	return len(p), nil
}

func (l *lines) with(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.all {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// The merged histogram is the histogram of every latency: the report's
// percentiles from three agents' deltas equal those of one recorder that
// saw every latency itself.
func TestMergedLatencyEqualsOneHistogram(t *testing.T) {
	one, err := report.NewRecorder(0.05)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := report.NewRecorder(0.05)
	rng := rand.New(rand.NewPCG(1, 2))
	agents := []*Latencies{NewLatencies(), NewLatencies(), NewLatencies()}
	for tick := range 20 {
		for i, a := range agents {
			for range 500 + 100*i {
				// Log-normal-ish latencies from 50 µs to seconds, each agent
				// its own spread.
				d := time.Duration(float64(time.Millisecond) * (0.05 + rng.ExpFloat64()*float64(1+i*3)*float64(1+tick%4)))
				one.Record(d)
				a.Record(d)
			}
			b, err := a.Take()
			if err != nil {
				t.Fatal(err)
			}
			h, err := decodeHist(b)
			if err != nil {
				t.Fatal(err)
			}
			replay(h, merged)
		}
	}
	o, m := one.Summary().Overall, merged.Summary().Overall
	if o.Count != m.Count || o.P50 != m.P50 || o.P90 != m.P90 || o.P99 != m.P99 || o.P999 != m.P999 || o.Max != m.Max {
		t.Fatalf("merged %+v, want %+v", m, o)
	}
	if o.Count != 20*(500+600+700) {
		t.Fatalf("count %d", o.Count)
	}
	if b, _ := agents[0].Take(); b != nil {
		t.Fatal("Take after Take returned latencies")
	}
}

// split gives equal shares, whole ones that add up in concurrency mode,
// and less to a lighter (saturated) agent.
func TestSplit(t *testing.T) {
	s := split(300, map[string]float64{"a": 1, "b": 1, "c": 1}, false)
	if s["a"] != 100 || s["b"] != 100 || s["c"] != 100 {
		t.Fatalf("rate split %v", s)
	}
	s = split(10, map[string]float64{"a": 1, "b": 1, "c": 1}, true)
	if s["a"]+s["b"]+s["c"] != 10 || s["a"] != 4 {
		t.Fatalf("whole split %v", s)
	}
	w := reweight(reweight(1, true), true)
	s = split(100, map[string]float64{"a": 1, "b": w}, false)
	if !(s["b"] < s["a"]) || s["a"]+s["b"] < 99.999 {
		t.Fatalf("a saturated agent's share %v", s)
	}
	if reweight(w, false) <= w || reweight(1, false) != 1 {
		t.Fatal("weight does not recover")
	}
}

func testSpec(t *testing.T, u string, ceiling, start float64) Spec {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	l := governor.NewLimits(governor.Rate, ceiling)
	l.Start = start
	l.Window = 500 * time.Millisecond
	c := engine.Config{Targets: []targets.Target{{Method: "GET", URL: pu, Header: http.Header{}}}, Limits: l,
		Tick: 100 * time.Millisecond, Timeout: 2 * time.Second, Tries: 1, Grace: 5 * time.Second, MaxVUs: 300}
	f, _ := engine.ParseFailOn(engine.DefaultFailOn)
	c.FailOn = &f
	return SpecOf(c, 3)
}

func newController(t *testing.T, cfg ControllerConfig) *Controller {
	t.Helper()
	cfg.Listen, cfg.Token, cfg.Version = "127.0.0.1:0", testToken, "test"
	if cfg.Wait == 0 {
		cfg.Wait = testwait.Deadline
	}
	c, err := NewController(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// runAgent joins c as name in the background; the returned channel gets
// its outcome.
// builtinTarget serves the built-in target of the given capacity on
// loopback until the test ends.
func builtinTarget(t *testing.T, capacity float64) *httptest.Server {
	t.Helper()
	tg, err := target.New(target.NewConfig(capacity))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	return srv
}

// startRun runs the controller until ctx ends; its result arrives on the
// channel (an error fails the test).
func startRun(t *testing.T, c *Controller, ctx context.Context) <-chan *Result {
	done := make(chan *Result, 1)
	go func() {
		res, err := c.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	return done
}

func runAgent(ctx context.Context, c *Controller, name, token string) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := Join(ctx, Config{Join: c.URL(), Token: token, Name: name, Version: "test", Wait: 5 * time.Second})
		out <- err
	}()
	return out
}

// A wrong token is refused: the agent's Join fails saying so, the
// controller logs one line naming it, and the agent counts nothing.
func TestWrongTokenRefused(t *testing.T) {
	var log lines
	c := newController(t, ControllerConfig{Agents: 1, Wait: 200 * time.Millisecond, Logger: log.logger(),
		Spec: testSpec(t, "http://127.0.0.1:1/", 100, 10)})
	err := <-runAgent(context.Background(), c, "intruder", "wrong")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "refused this agent's token") {
		t.Fatalf("Join: %v", err)
	}
	if got := log.with("wrong token"); len(got) != 1 || !strings.Contains(got[0], "intruder") {
		t.Fatalf("controller lines %q", log.with(""))
	}
	_, err = c.Run(context.Background())
	if !errors.Is(err, ErrNotEnoughAgents) || !strings.Contains(err.Error(), "none joined") {
		t.Fatalf("Run: %v", err)
	}
	if n := c.m.Counts().Started; n != 0 {
		t.Fatalf("a refused agent counted %d attempts", n)
	}
}

// An agent of another version is refused in one line on both sides.
func TestOtherVersionRefused(t *testing.T) {
	var log lines
	c := newController(t, ControllerConfig{Agents: 1, Logger: log.logger(), Spec: testSpec(t, "http://127.0.0.1:1/", 100, 10)})
	_, err := Join(context.Background(), Config{Join: c.URL(), Token: testToken, Name: "old", Version: "v0", Wait: time.Second})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "throttle test, this agent v0") {
		t.Fatalf("Join: %v", err)
	}
	if len(log.with("another version")) != 1 {
		t.Fatalf("controller lines %q", log.with(""))
	}
}

// Three agents against one shedding target find its capacity as one
// process does (the engine's own end-to-end band: loose below, since on a
// loaded two-core machine three generators, the target and the race
// detector share the CPU), every agent carrying load, every attempt the
// target saw counted once in the merged counters.
func TestThreeAgentsFindCapacity(t *testing.T) {
	const capacity = 400.0
	tg, srv := shedTarget(t, capacity)
	var ws windowLog
	rec, _ := report.NewRecorder(0.05)
	spec := testSpec(t, srv.URL+"/", 5000, 50)
	spec.Duration = 4 * testwait.Deadline
	c := newController(t, ControllerConfig{Agents: 3, Spec: spec, Latency: rec, Observer: ws.observe})
	res := runThreeUntil(t, c, "an estimate resting on 6 settled windows", func() bool {
		_, settled := ws.count()
		return settled >= 6
	})
	est := res.Capacity
	t.Logf("estimate %+v; agents %+v", est, res.Agents)
	// Tight above: the target's capacity bounds the goodput. Below, the
	// band gives way only where the agents said they were the limit (their
	// watch: CPU, schedule lag), as the report then says.
	if est.Goodput > 1.08*capacity || (est.Goodput < 0.3*capacity && res.Generator.SaturatedTicks == 0) {
		t.Errorf("goodput %.1f, want in [%.0f, %.0f] (saturated ticks %d)", est.Goodput, 0.3*capacity, 1.08*capacity, res.Generator.SaturatedTicks)
	}
	var sum uint64
	for _, a := range res.Agents {
		if a.Attempts == 0 || a.Lost {
			t.Errorf("agent %+v carried no load or was lost", a)
		}
		sum += a.Attempts
	}
	st := tg.Stats()
	if got := res.Counts.OK + res.Counts.Failed; got != st.OK+st.Shed || sum != got {
		t.Errorf("merged attempts %d, per agent %d, target saw %d", got, sum, st.OK+st.Shed)
	}
	if n := rec.Summary().Overall.Count; uint64(n) != res.Counts.OK+res.Counts.Failed {
		t.Errorf("latencies merged %d, attempts %d", n, res.Counts.OK+res.Counts.Failed)
	}
}

// shedTarget serves the built-in target shedding above capacity until the
// test ends. Its burst is nginx's limit_req burst=20 at 400 r/s: three
// generators' arrivals are not one evenly spaced stream, and a 20 ms
// bucket sheds their jitter at the capacity itself.
func shedTarget(t *testing.T, capacity float64) (*target.Target, *httptest.Server) {
	t.Helper()
	tc := target.NewConfig(capacity)
	tc.Burst = 50 * time.Millisecond
	tg, err := target.New(tc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	return tg, srv
}
