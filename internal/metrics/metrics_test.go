package metrics_test

import (
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/metrics"
	"github.com/throttlekit/throttle/internal/metrics/metricstest"
	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/target"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		serveForBench() // BenchmarkEngineMetrics' server process
		return
	}
	// fasthttp's idle-connection cleaner outlives a closed engine by up to
	// its idle timeout (the engine's and the CLI's tests ignore it too);
	// BenchmarkEngineMetrics runs real engines.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"))
}

// fakeEngine is a phase whose snapshot a test sets.
type fakeEngine struct {
	mu sync.Mutex
	s  engine.Snapshot
}

func (f *fakeEngine) set(s engine.Snapshot) {
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
}

func (f *fakeEngine) Snapshot() engine.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s
}

// gather reads the registry through its HTTP handler and the Prometheus
// text parser, as a scraper would.
func gather(t *testing.T, r *metrics.Registry) metricstest.Families {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	r.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	f, err := metricstest.Parse(rec.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func value(t *testing.T, f metricstest.Families, name string, labels map[string]string) float64 {
	t.Helper()
	v, err := f.Value(name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func limits() governor.Limits {
	l := governor.NewLimits(governor.Rate, 5000)
	l.Floor, l.Start = 10, 25
	return l
}

func window(offer, frac float64, sig governor.Signal) governor.Window {
	return governor.Window{Offer: offer, OK: 100, Frac: frac, Decision: governor.Decision{Signal: sig, From: offer, Offer: offer}}
}

// A phase exports the engine's snapshot, the decisions observed and the
// recorder's latency, every series labelled with the phase.
func TestPhaseExportsWhatTheEngineKeeps(t *testing.T) {
	rec, err := report.NewRecorder(0.05)
	if err != nil {
		t.Fatal(err)
	}
	var eng fakeEngine
	s := engine.Snapshot{InFlight: 7, Workers: 9, Governor: governor.State{Offer: 400, Streak: 1, Windows: 3}}
	s.Counts.Classes[engine.ClassOK] = 900
	s.Counts.Classes[engine.Class5xx] = 40
	s.Counts.Classes[engine.ClassTimeout] = 2
	s.Counts.IterOK, s.Counts.IterFailed = 890, 30
	s.Counts.Dropped, s.Counts.Aborted, s.Counts.Missed = 5, 1, 4
	eng.set(s)

	reg := metrics.New()
	p := metrics.NewPhase("main", rec)
	if err := reg.Register(p, metrics.Source{Limits: limits(), Snapshot: eng.Snapshot}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(p, metrics.Source{Limits: limits(), Snapshot: eng.Snapshot}); err == nil {
		t.Error("a phase registered twice")
	}

	f := gather(t, reg)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"throttle_offer", nil, 400},
		{"throttle_ceiling", nil, 5000},
		{"throttle_floor", nil, 10},
		{"throttle_high", nil, 0.05},
		{"throttle_low", nil, 0.01},
		{"throttle_memory_streak", nil, 1},
		{"throttle_windows_total", nil, 3},
		{"throttle_attempts_total", map[string]string{"result": "ok", "class": "ok"}, 900},
		{"throttle_attempts_total", map[string]string{"result": "failed", "class": "5xx"}, 40},
		{"throttle_attempts_total", map[string]string{"result": "failed", "class": "timeout"}, 2},
		{"throttle_attempts_total", map[string]string{"result": "failed", "class": "refused"}, 0},
		{"throttle_iterations_total", map[string]string{"result": "ok"}, 890},
		{"throttle_iterations_total", map[string]string{"result": "failed"}, 30},
		{"throttle_dropped_arrivals_total", nil, 5},
		{"throttle_missed_arrivals_total", nil, 4},
		{"throttle_aborted_attempts_total", nil, 1},
		{"throttle_in_flight", nil, 7},
		{"throttle_workers", nil, 9},
		{"throttle_attempt_duration_seconds", nil, 0},
		{"throttle_decisions_total", map[string]string{"signal": "back-off"}, 0},
	} {
		if got := value(t, f, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n := len(f.Series("throttle_attempts_total", nil)); n != int(engine.NumClasses) {
		t.Errorf("%d attempt series, want one per class (%d)", n, engine.NumClasses)
	}
	for _, name := range []string{"throttle_last_bad", "throttle_window_failure_fraction"} {
		if v := value(t, f, name, nil); !math.IsNaN(v) {
			t.Errorf("%s = %v before anything is known, want NaN", name, v)
		}
	}
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			if metricstest.Label(m, "phase") != "main" {
				t.Errorf("%s%s has no phase label", name, metricstest.String(m))
			}
		}
	}

	// Windows close, the memory is set, latencies are recorded: the next
	// scrape shows them.
	p.Observe(window(800, 0, governor.SignalSlowStart))
	p.Observe(window(1600, 0.5, governor.SignalBackoff))
	p.Observe(window(800, 0.02, governor.SignalDeadBand))
	s.Governor.LastBad = 1600
	eng.set(s)
	for range 3 {
		rec.Record(2 * time.Millisecond)
	}
	rec.Record(3 * time.Second)
	f = gather(t, reg)
	if v := value(t, f, "throttle_last_bad", nil); v != 1600 {
		t.Errorf("last_bad %v, want 1600", v)
	}
	if v := value(t, f, "throttle_window_failure_fraction", nil); v != 0.02 {
		t.Errorf("window fraction %v, want the newest window's 0.02", v)
	}
	for sig, want := range map[string]float64{"slow-start": 1, "back-off": 1, "dead-band": 1, "probe": 0} {
		if v := value(t, f, "throttle_decisions_total", map[string]string{"signal": sig}); v != want {
			t.Errorf("decisions{signal=%q} = %v, want %v", sig, v, want)
		}
	}
	h := f.Series("throttle_attempt_duration_seconds", nil)[0].GetHistogram()
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-3.006) > 0.01 {
		t.Errorf("latency count %d sum %v, want 4 and 3.006", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		switch ub := b.GetUpperBound(); {
		case ub >= 3:
			want = 4
		case ub >= 0.002:
			want = 3
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

// The latency buckets ascend from 100 µs to a minute: Cumulative and
// Prometheus both need them in order.
func TestLatencyBounds(t *testing.T) {
	b := metrics.LatencyBounds
	if len(b) != 35 || b[0] != 100*time.Microsecond || b[len(b)-1] != time.Minute {
		t.Fatalf("%d bounds from %v to %v", len(b), b[0], b[len(b)-1])
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			t.Errorf("bound %d (%v) is not above bound %d (%v)", i, b[i], i-1, b[i-1])
		}
	}
	tb := metrics.TrendBounds
	if len(tb) != 28 || tb[0] != 0.001 || tb[len(tb)-1] != 1e6 || !slices.IsSorted(tb) {
		t.Errorf("trend bounds %v: want 1-2-5 from 0.001 to 1e6, ascending", tb)
	}
}

// Every signal the governor can decide is a decisions series, named as the
// governor names it, and nothing else is.
func TestSignalsAreTheGovernors(t *testing.T) {
	got := map[string]bool{}
	for _, s := range metrics.Signals() {
		got[s.String()] = true
	}
	for _, want := range []governor.Signal{governor.SignalSlowStart, governor.SignalSafeClimb, governor.SignalProbe,
		governor.SignalBackoff, governor.SignalDeadBand, governor.SignalNoEvidence, governor.SignalAtCeiling,
		governor.SignalAtFloor, governor.SignalMemoryCleared} {
		if !got[want.String()] {
			t.Errorf("signal %s is not exported", want)
		}
	}
	if got[governor.SignalNone.String()] || got["unknown"] || len(got) != len(metrics.Signals()) {
		t.Errorf("signals %v: want each named signal once, no none or unknown", got)
	}
}

// Two phases share the registry, told apart by their label.
func TestTwoPhases(t *testing.T) {
	reg := metrics.New()
	for i, name := range []string{"warmup", "main"} {
		var eng fakeEngine
		eng.set(engine.Snapshot{Governor: governor.State{Offer: float64(100 * (i + 1))}})
		if err := reg.Register(metrics.NewPhase(name, nil), metrics.Source{Limits: limits(), Snapshot: eng.Snapshot}); err != nil {
			t.Fatal(err)
		}
	}
	f := gather(t, reg)
	if a, b := value(t, f, "throttle_offer", map[string]string{"phase": "warmup"}), value(t, f, "throttle_offer", map[string]string{"phase": "main"}); a != 100 || b != 200 {
		t.Errorf("offers %v, %v; want 100, 200", a, b)
	}
	if f["throttle_attempt_duration_seconds"] != nil {
		t.Error("a phase without a latency source exports a latency histogram")
	}
}

// The built-in target's counters are its Stats.
func TestTargetCounters(t *testing.T) {
	cfg := target.NewConfig(2)
	cfg.Latency = 0
	tg, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		tg.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	reg := metrics.New()
	if err := reg.AddTarget("main", tg); err != nil {
		t.Fatal(err)
	}
	f := gather(t, reg)
	st := tg.Stats()
	if st.OK == 0 || st.Shed == 0 {
		t.Fatalf("the test wants both served and shed requests, got %+v", st)
	}
	for name, want := range map[string]float64{
		"throttle_target_capacity":     2,
		"throttle_target_served_total": float64(st.OK),
		"throttle_target_shed_total":   float64(st.Shed),
		"throttle_target_in_flight":    0,
	} {
		if got := value(t, f, name, map[string]string{"phase": "main"}); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		":9100":          "127.0.0.1:9100",
		"127.0.0.1:0":    "127.0.0.1:0",
		"localhost:9100": "localhost:9100",
		"0.0.0.0:9100":   "0.0.0.0:9100",
		"[::1]:9100":     "[::1]:9100",
	} {
		if got, err := metrics.ListenAddr(in); err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "9100", "127.0.0.1", "127.0.0.1:x", "127.0.0.1:65536", "127.0.0.1:-1", "[::1:9100", "127.0.0.1:+80"} {
		_, err := metrics.ListenAddr(in)
		var ae *metrics.AddrError
		if !errors.As(err, &ae) {
			t.Errorf("ListenAddr(%q): %v, want an AddrError", in, err)
		}
	}
}

// A server answers scrapes once Listen returns and stops with Close; a busy
// address is the machine's refusal, not a bad address.
func TestServer(t *testing.T) {
	reg := metrics.New()
	var eng fakeEngine
	eng.set(engine.Snapshot{Governor: governor.State{Offer: 42}})
	if err := reg.Register(metrics.NewPhase("main", nil), metrics.Source{Limits: limits(), Snapshot: eng.Snapshot}); err != nil {
		t.Fatal(err)
	}
	srv, err := metrics.Listen("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/metrics") {
		t.Errorf("URL %q", srv.URL())
	}
	f, err := metricstest.Scrape(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if v := value(t, f, "throttle_offer", nil); v != 42 {
		t.Errorf("offer %v, want 42", v)
	}

	_, err = metrics.Listen(srv.Addr().String(), reg)
	var sys *os.SyscallError
	var ae *metrics.AddrError
	if !errors.As(err, &sys) || errors.As(err, &ae) {
		t.Errorf("listening on a busy address: %v, want the system's refusal", err)
	}

	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := metricstest.Scrape(srv.URL()); err == nil {
		t.Error("a closed server still answers")
	}
	if c, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("a closed server still accepts connections")
	}
}

// A host that keeps its closed windows (a script phase) is read at scrape
// time: decisions and the newest fraction come from its list.
func TestPhaseReadsWindowsFromSource(t *testing.T) {
	var mu sync.Mutex
	var ws []governor.Window
	var eng fakeEngine
	reg := metrics.New()
	p := metrics.NewPhase("checkout", nil)
	if err := reg.Register(p, metrics.Source{Limits: limits(), Snapshot: eng.Snapshot, Windows: func() []governor.Window {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ws)
	}}); err != nil {
		t.Fatal(err)
	}
	checkout := map[string]string{"phase": "checkout"}
	f := gather(t, reg)
	if v := value(t, f, "throttle_window_failure_fraction", checkout); !math.IsNaN(v) {
		t.Errorf("fraction %v before any window, want NaN", v)
	}
	mu.Lock()
	ws = append(ws, window(100, 0, governor.SignalSlowStart), window(200, 0.3, governor.SignalBackoff), window(140, 0, governor.SignalSafeClimb))
	mu.Unlock()
	p.Observe(window(1, 0.9, governor.SignalAtFloor)) // ignored: the source's windows are the truth
	f = gather(t, reg)
	if v := value(t, f, "throttle_window_failure_fraction", checkout); v != 0 {
		t.Errorf("fraction %v, want the newest window's 0", v)
	}
	for sig, want := range map[string]float64{"slow-start": 1, "back-off": 1, "safe-climb": 1, "at-floor": 0} {
		if v := value(t, f, "throttle_decisions_total", map[string]string{"phase": "checkout", "signal": sig}); v != want {
			t.Errorf("decisions{signal=%q} = %v, want %v", sig, v, want)
		}
	}
}
