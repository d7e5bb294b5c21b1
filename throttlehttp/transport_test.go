package throttlehttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/testwait"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = WithLogger(slog.New(slog.DiscardHandler))

// roundTripFunc is a base RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// answer is a base that answers every request with the status in *code, or
// fails it with *fail when set.
func answer(code *atomic.Int32, fail *atomic.Pointer[error]) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if e := fail.Load(); e != nil {
			return nil, *e
		}
		return &http.Response{StatusCode: int(code.Load()), Body: io.NopCloser(strings.NewReader("body")), Request: r}, nil
	})
}

func get(t *testing.T, rt http.RoundTripper, ctx context.Context) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return rt.RoundTrip(req)
}

func concurrencyLimits(floor, start, ceiling float64) governor.Limits {
	l := governor.NewLimits(governor.Concurrency, ceiling)
	l.Floor, l.Start = floor, start
	return l
}

func TestNewRejectsBadInput(t *testing.T) {
	bad := governor.NewLimits(governor.Rate, 10)
	bad.Floor = 0
	cases := []struct {
		name string
		opts []Option
		want string
	}{
		{"no limits", nil, "limits are required"},
		{"bad limits", []Option{WithLimits(bad)}, "floor must be > 0"},
		{"nil classifier", []Option{WithLimits(governor.NewLimits(governor.Rate, 10)), WithClassifier(nil)}, "classifier"},
		{"nil clock", []Option{WithLimits(governor.NewLimits(governor.Rate, 10)), WithClock(nil)}, "clock"},
		{"bad governor option", []Option{WithLimits(governor.NewLimits(governor.Rate, 10)), WithGovernorOptions(governor.WithTick(0))}, "tick"},
	}
	for _, c := range cases {
		tr, err := New(nil, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want it to mention %q", c.name, err, c.want)
		}
		if tr != nil {
			t.Errorf("%s: got a transport with the error", c.name)
			tr.Close()
		}
	}
}

func TestOutcomesAreCountedAsAttempts(t *testing.T) {
	var code atomic.Int32
	var fail atomic.Pointer[error]
	tr, err := New(answer(&code, &fail), WithLimits(concurrencyLimits(1, 1, 1)), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	transportErr := errors.New("connection reset by peer")
	cases := []struct {
		name       string
		code       int
		err        error
		cancelled  bool
		ok, failed uint64 // deltas
	}{
		{"200", 200, nil, false, 1, 0},
		{"404 is an answer", 404, nil, false, 1, 0},
		{"429", 429, nil, false, 0, 1},
		{"500", 500, nil, false, 0, 1},
		{"503", 503, nil, false, 0, 1},
		{"transport error", 0, transportErr, false, 0, 1},
		{"timeout", 0, context.DeadlineExceeded, false, 0, 1},
		{"cancelled by its caller under way: not an attempt", 0, context.Canceled, true, 0, 0},
	}
	for _, c := range cases {
		code.Store(int32(c.code))
		if c.err != nil {
			fail.Store(&c.err)
		} else {
			fail.Store(nil)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if c.cancelled {
			// The base sees the cancellation as it happens mid-request.
			e := error(context.Canceled)
			fail.Store(&e)
			base := tr.base
			tr.base = roundTripFunc(func(r *http.Request) (*http.Response, error) { cancel(); return base.RoundTrip(r) })
			defer func() { tr.base = base }()
		}
		ok0, f0 := tr.Attempts()
		resp, err := get(t, tr, ctx)
		if (err != nil) != (c.err != nil) {
			t.Errorf("%s: err = %v", c.name, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
		cancel()
		ok1, f1 := tr.Attempts()
		if ok1-ok0 != c.ok || f1-f0 != c.failed {
			t.Errorf("%s: counted %d ok, %d failed; want %d, %d", c.name, ok1-ok0, f1-f0, c.ok, c.failed)
		}
	}

	// A custom classifier: only 503 fails.
	tr2, err := New(answer(&code, &fail), WithLimits(concurrencyLimits(1, 1, 1)), quiet,
		WithClassifier(func(_ *http.Request, resp *http.Response, err error) bool {
			return err == nil && resp.StatusCode == 503
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer tr2.Close()
	fail.Store(nil)
	for _, c := range []int32{200, 500, 503, 429} {
		code.Store(c)
		resp, err := get(t, tr2, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if ok, failed := tr2.Attempts(); ok != 3 || failed != 1 {
		t.Errorf("custom classifier: %d ok, %d failed; want 3, 1", ok, failed)
	}
}

func TestConcurrencyPermitHeldUntilBodyDone(t *testing.T) {
	var code atomic.Int32
	code.Store(200)
	var fail atomic.Pointer[error]
	tr, err := New(answer(&code, &fail), WithLimits(concurrencyLimits(1, 1, 1)), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	resp, err := get(t, tr, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.Gate().Stats().InFlight; n != 1 {
		t.Fatalf("in flight with the body open = %d, want 1", n)
	}
	if _, ok := tr.Gate().TryAcquire(); ok {
		t.Fatal("the gate admitted a second request while the first body was open at concurrency 1")
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Fatal(err)
	}
	if n := tr.Gate().Stats().InFlight; n != 0 {
		t.Fatalf("in flight after reading the body to its end = %d, want 0", n)
	}
	resp.Body.Close() // a second release does nothing
	if n := tr.Gate().Stats().InFlight; n != 0 {
		t.Fatalf("in flight after closing too = %d, want 0", n)
	}

	resp, err = get(t, tr, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := tr.Gate().Stats().InFlight; n != 0 {
		t.Fatalf("in flight after closing an unread body = %d, want 0", n)
	}

	e := error(errors.New("refused"))
	fail.Store(&e)
	if _, err := get(t, tr, context.Background()); err == nil {
		t.Fatal("a failing base returned no error")
	}
	if n := tr.Gate().Stats().InFlight; n != 0 {
		t.Fatalf("in flight after a failed round trip = %d, want 0", n)
	}
}

// TestWaitPastDeadlineNeverReachesTarget: a request whose context ends while
// the gate holds it fails with the context's error, and the server never
// sees it. The gate runs on a fake clock that never moves, so in rate mode
// its next token never comes; in concurrency mode the one permit is held by
// a request the server keeps waiting.
func TestWaitPastDeadlineNeverReachesTarget(t *testing.T) {
	for _, mode := range []governor.Mode{governor.Rate, governor.Concurrency} {
		t.Run(mode.String(), func(t *testing.T) {
			var arrivals atomic.Int64
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if arrivals.Add(1) == 1 && mode == governor.Concurrency {
					<-release
				}
			}))
			defer srv.Close()
			base := &http.Transport{}
			defer base.CloseIdleConnections()
			l := governor.NewLimits(mode, 1)
			tr, err := New(base, WithLimits(l), WithClock(clock.NewFake(time.Unix(0, 0))), quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			client := &http.Client{Transport: tr}

			first := make(chan error, 1)
			go func() {
				resp, err := client.Get(srv.URL)
				if err == nil {
					resp.Body.Close()
				}
				first <- err
			}()
			if mode == governor.Rate {
				if err := <-first; err != nil {
					t.Fatal(err)
				}
			} else {
				// The first request holds the permit.
				waitFor(t, "the first request to reach the server", func() bool { return arrivals.Load() > 0 })
			}

			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, strings.NewReader("payload"))
			_, err = client.Do(req)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want the context's deadline error", err)
			}
			if mode == governor.Concurrency {
				close(release)
				if err := <-first; err != nil {
					t.Fatal(err)
				}
			}
			if n := arrivals.Load(); n != 1 {
				t.Errorf("the server saw %d requests, want 1: the throttled one reached it", n)
			}
			if ok, failed := tr.Attempts(); ok != 1 || failed != 0 {
				t.Errorf("attempts %d ok, %d failed; want 1, 0: a request stopped at the gate is no attempt", ok, failed)
			}
		})
	}
}

// TestGovernorMovesTheGate runs the governor on a fake clock: ten clean
// requests make a clean window (slow start doubles 4 → 8), ten failed ones
// a total-failure window (back-off ×0.25: 8 → 2).
func TestGovernorMovesTheGate(t *testing.T) {
	var code atomic.Int32
	var fail atomic.Pointer[error]
	fake := clock.NewFake(time.Unix(0, 0))
	l := concurrencyLimits(1, 4, 64)
	l.Window, l.MinAttempts = time.Second, 10
	// No settle span: the requests go out right after each confirmation, and
	// this test counts them all as the window's evidence.
	tr, err := New(answer(&code, &fail), WithLimits(l), WithClock(fake), quiet,
		WithGovernorOptions(governor.WithTick(100*time.Millisecond), governor.WithSettle(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	waitFor(t, "the governor's ticker", func() bool { return fake.Waiters() > 0 })
	waitFor(t, "the start offer confirmed", func() bool { s := tr.State(); return s.Offer == 4 && !s.Pending })

	for _, step := range []struct {
		code int32
		want float64
	}{{200, 8}, {503, 2}} {
		code.Store(step.code)
		for range 10 {
			resp, err := get(t, tr, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		// Ticks are dropped while the governor is busy, so step the clock
		// until the window has closed and its decision is confirmed.
		waitFor(t, "the window's decision", func() bool {
			fake.Advance(100 * time.Millisecond)
			s := tr.State()
			return s.Offer == step.want && !s.Pending
		})
		if got := tr.Offer(); got != step.want {
			t.Fatalf("gate offer = %v, want %v", got, step.want)
		}
	}
}

// waitFor polls cond until it holds, failing the test after testwait's
// deadline. It waits for other goroutines (the governor's loop, the control
// path) to catch up, not for time to pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, testwait.Deadline, what, cond)
}

// TestTimeoutAfterLongGateWaitIsNotCounted: a timeout at the service counts
// as a failure, unless the gate used up more than half of the request's time
// first. The gate runs on a fake clock at 1/s, so the test decides when the
// second token comes: the first request is admitted at once, the second
// only once more than half of its (wall-clock) time has passed at the gate.
// The service holds every request until its client gives up. About 3 s.
func TestTimeoutAfterLongGateWaitIsNotCounted(t *testing.T) {
	var arrivals atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(testwait.Deadline):
		}
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	fake := clock.NewFake(time.Unix(0, 0))
	tr, err := New(base, WithLimits(governor.NewLimits(governor.Rate, 1)), WithClock(fake), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	client := &http.Client{Transport: tr}

	call := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	// Admitted at once, the service had all of its second: a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := call(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if ok, failed := tr.Attempts(); ok != 0 || failed != 1 {
		t.Fatalf("after a timeout at the service: %d ok, %d failed; want 0, 1", ok, failed)
	}

	// The next token is a second away on the fake clock: the request waits.
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	second := make(chan error, 1)
	go func() { second <- call(ctx) }()
	waitFor(t, "the second request to wait at the gate", func() bool { return tr.Gate().Stats().Waiting == 1 })
	// It entered the gate before it was seen waiting, so once half the
	// time left then (and a margin) has passed, the gate has used more
	// than half of its time. That wait on the wall clock is the quantity
	// under test, not a guess at how long something takes.
	deadline, _ := ctx.Deadline()
	<-time.After(time.Until(deadline)/2 + 100*time.Millisecond)
	fake.Advance(time.Second)
	if err := <-second; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if n := arrivals.Load(); n != 2 {
		t.Fatalf("the server saw %d requests, want 2", n)
	}
	if ok, failed := tr.Attempts(); ok != 0 || failed != 1 {
		t.Errorf("after a timeout the gate starved: %d ok, %d failed; want it not counted (0, 1)", ok, failed)
	}
}
