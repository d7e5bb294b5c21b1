package throttlehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// Classifier decides whether one attempt failed, from what the base
// RoundTripper returned: a response (err nil) or an error. It must be safe for
// concurrent use and must not read or keep the response body.
type Classifier func(req *http.Request, resp *http.Response, err error) (failed bool)

// DefaultClassifier fails a transport error or timeout (any error from the
// base RoundTripper), a 5xx answer and 429 Too Many Requests. Other answers,
// 4xx included, are ok: the service answered.
func DefaultClassifier(_ *http.Request, resp *http.Response, err error) bool {
	return err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
}

// Option configures New.
type Option func(*config)

type config struct {
	limits   *governor.Limits
	classify Classifier
	log      *slog.Logger
	clock    clock.Clock
	gov      []governor.Option
}

// WithLimits sets the governed phase's limits: the mode (rate or
// concurrency), the ceiling (the most the service is ever offered), the
// floor, start, failure bounds and window. Required.
func WithLimits(l governor.Limits) Option { return func(c *config) { c.limits = &l } }

// WithClassifier replaces DefaultClassifier.
func WithClassifier(f Classifier) Option { return func(c *config) { c.classify = f } }

// WithLogger sets the logger of the governor's movement lines (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithClock replaces the wall clock of the gate and the governor (tests pass
// a clock.Fake).
func WithClock(clk clock.Clock) Option { return func(c *config) { c.clock = clk } }

// WithGovernorOptions passes further options to the governor: its tick, phase
// name or window observer. They apply after the logger and clock above.
func WithGovernorOptions(o ...governor.Option) Option {
	return func(c *config) { c.gov = append(c.gov, o...) }
}

// Transport is an http.RoundTripper that throttles the requests it carries
// adaptively. Build it with New; the zero value is not usable. It is safe for
// concurrent use, as an http.RoundTripper must be.
type Transport struct {
	base       http.RoundTripper
	gate       *gate.Gate
	gov        *governor.Governor
	classify   Classifier
	concurrent bool
	tally      governor.Tally
	stop       func() // ends the governor's loop and closes ctl
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport that sends requests through base
// (http.DefaultTransport when nil) and starts its governor. It fails when
// WithLimits is missing or the limits do not validate. Close it when done.
func New(base http.RoundTripper, opts ...Option) (*Transport, error) {
	c := config{classify: DefaultClassifier, log: slog.Default(), clock: clock.Real()}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.limits == nil:
		return nil, errors.New("throttlehttp: limits are required (pass WithLimits)")
	case c.classify == nil:
		return nil, errors.New("throttlehttp: classifier must not be nil")
	case c.clock == nil:
		return nil, errors.New("throttlehttp: clock must not be nil")
	}
	l := *c.limits
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("throttlehttp: %w", err)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	mode := gate.Rate
	if l.Mode == governor.Concurrency {
		mode = gate.Concurrency
	}
	g, err := gate.New(gate.Config{Mode: mode, Floor: l.Floor, Ceiling: l.Ceiling, Offer: l.Start}, gate.WithClock(c.clock))
	if err != nil {
		return nil, fmt.Errorf("throttlehttp: %w", err)
	}
	t := &Transport{base: base, gate: g, classify: c.classify, concurrent: mode == gate.Concurrency}
	gopts := append([]governor.Option{governor.WithClock(c.clock), governor.WithLogger(c.log)}, c.gov...)
	gov, err := governor.New(l, &t.tally, gopts...)
	if err != nil {
		return nil, fmt.Errorf("throttlehttp: %w", err)
	}
	t.gov = gov
	_, t.stop = gov.Start(g)
	return t, nil
}

// RoundTrip waits at the gate, then sends req through the base RoundTripper
// and counts the outcome. When req's context ends at the gate it returns the
// context's error and req never reaches the base.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Deadlines are wall-clock times, so the budget is measured on the wall
	// clock whatever clock the gate runs on.
	deadline, hasDeadline := req.Context().Deadline()
	var entered time.Time
	if hasDeadline {
		entered = time.Now()
	}
	p, err := t.gate.Acquire(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	starved := hasDeadline && deadline.Sub(time.Now()) < deadline.Sub(entered)/2
	resp, err := t.base.RoundTrip(req)
	t.count(req, resp, err, starved)
	if err != nil || !t.concurrent {
		p.Release()
		return resp, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil || resp.Body == http.NoBody {
		// An upgraded connection is no longer a request in flight, and
		// its body must stay an io.ReadWriteCloser: do not wrap it.
		p.Release()
		return resp, nil
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, permit: p}
	return resp, nil
}

// count records one attempt, unless what ended it says nothing about the
// service: its caller cancelled it, or its deadline passed after the gate had
// used up more than half of the time it had (starved).
func (t *Transport) count(req *http.Request, resp *http.Response, err error, starved bool) {
	if err != nil {
		switch cause := req.Context().Err(); {
		case errors.Is(cause, context.Canceled):
			return
		case errors.Is(cause, context.DeadlineExceeded) && starved:
			return
		}
	}
	t.tally.Add(t.classify(req, resp, err))
}

// Attempts returns the cumulative attempts counted so far, the governor's
// counters.
func (t *Transport) Attempts() (ok, failed uint64) { return t.tally.Attempts() }

// Offer returns the offer the gate enforces now: requests per second or
// requests in flight.
func (t *Transport) Offer() float64 { return t.gate.Offer() }

// State returns the governor's state, for live views.
func (t *Transport) State() governor.State { return t.gov.State() }

// Gate returns the gate, for its Stats.
func (t *Transport) Gate() *gate.Gate { return t.gate }

// CloseIdleConnections closes the base RoundTripper's idle connections when
// it can (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Close stops the governor and its control path and waits for them to end.
// It is idempotent. Requests keep passing the gate at the last offer.
func (t *Transport) Close() { t.stop() }

// releasingBody releases a concurrency permit when the body is closed or read
// to its end, whichever comes first. Permit.Release is idempotent, but a
// second call still takes the gate's lock, so the body releases once.
type releasingBody struct {
	io.ReadCloser
	permit gate.Permit
	once   sync.Once
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.permit.Release)
	}
	return n, err
}

func (b *releasingBody) Close() error {
	b.once.Do(b.permit.Release)
	return b.ReadCloser.Close()
}
