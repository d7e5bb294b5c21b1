package target

import (
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/clock"
)

// Option configures a Target.
type Option func(*Target)

// WithClock replaces the wall clock; tests pass a clock.Fake so the model
// arithmetic runs exactly. Service times and queue waits follow this clock.
func WithClock(c clock.Clock) Option { return func(t *Target) { t.clk = c } }

// Stats are a target's counters since New. Every arrival ends in exactly one
// of OK, Shed, Expired, Collapsed, Down or Canceled once it has been
// answered; InFlight counts those not yet answered.
type Stats struct {
	Arrivals uint64
	// OK requests were served: 200.
	OK uint64
	// Shed requests found no room (no token, no slot, queue full): 503 at once.
	Shed uint64
	// Expired requests waited QueueTimeout in the queue unserved: 503.
	Expired uint64
	// Collapsed requests were failed by the Collapse model: 500.
	Collapsed uint64
	// Down requests arrived while the target was down: 503 or a reset.
	Down uint64
	// Canceled requests were abandoned by their client before an answer.
	Canceled uint64
	// Zombies are the Canceled requests the Backlog model served anyway
	// (without DropAbandoned): each took a server for its service time
	// after its client had left.
	Zombies uint64
	// InFlight is how many requests are being handled now, Queued how many
	// of them wait in the queue and Serving how many are in their service
	// time.
	// Zombies still waiting or in service count in all three: they are
	// server-side work in flight.
	InFlight, Queued, Serving int64
	// Capacity is the capacity now (SetCapacity changes it).
	Capacity float64
	// ByStatus counts answers by HTTP status; resets while down are not
	// answers and are not counted here.
	ByStatus map[int]uint64
}

// Target is the built-in HTTP target: an http.Handler with a known capacity
// and failure model (see Model). Every path and method is served the same
// way. It is safe for concurrent use; SetCapacity, SetLatency and SetDown
// change it while it serves, so tests can model a target that is resized,
// slowed, killed and recovered mid-run.
type Target struct {
	clk        clock.Clock
	model      Model
	concurrent bool
	burst      time.Duration
	depth      int
	qtimeout   time.Duration // 0: no queue timeout (Backlog)
	downClose  bool
	zombies    bool // Backlog keeps abandoned work

	latency atomic.Int64 // time.Duration
	down    atomic.Bool

	arrivals, ok, shed, expired, collapsed, downN, canceled, zombieN atomic.Uint64
	inFlight, serving                                                atomic.Int64

	mu        sync.Mutex
	capacity  float64
	tokens    float64 // rate mode; negative while requests hold reservations
	last      time.Time
	queued    int
	inService int       // concurrent mode
	waiters   []*waiter // concurrent mode, FIFO
	meter     rateMeter // collapse, rate mode
	acc       float64   // collapse: error-diffusion accumulator of success probability
}

// New returns a target for cfg, or the error Validate finds.
func New(cfg Config, opts ...Option) (*Target, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Target{
		clk:        clock.Real(),
		model:      cfg.Model,
		concurrent: cfg.Concurrent,
		burst:      cfg.Burst,
		depth:      cfg.QueueDepth,
		qtimeout:   cfg.QueueTimeout,
		downClose:  cfg.DownClose,
		zombies:    cfg.Model == Backlog && !cfg.DropAbandoned,
		capacity:   cfg.Capacity,
	}
	switch cfg.Model {
	case Queue:
	case Backlog:
		t.qtimeout = 0 // a backlog waits as long as it takes
	default:
		t.depth = 0
	}
	for _, o := range opts {
		o(t)
	}
	if t.clk == nil {
		t.clk = clock.Real()
	}
	t.latency.Store(int64(cfg.Latency))
	t.last = t.clk.Now()
	t.meter.epoch = t.last
	t.tokens = t.bucketSize()
	return t, nil
}

// SetCapacity changes the capacity from now on. It fails, changing nothing,
// for a value Config.Validate would reject.
func (t *Target) SetCapacity(c float64) error {
	if err := validCapacity(c, t.concurrent); err != nil {
		return err
	}
	now := t.clk.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refill(now) // tokens earned so far are earned at the old rate
	t.capacity = c
	t.tokens = math.Min(t.tokens, t.bucketSize())
	t.grantWaiters(now)
	return nil
}

// SetLatency changes the base service time from now on (negative counts as 0).
func (t *Target) SetLatency(d time.Duration) { t.latency.Store(int64(max(d, 0))) }

// SetDown kills (true) or recovers (false) the target. While down every
// request fails at once: 503, or a reset connection with Config.DownClose
// (which needs a real net/http server: the handler hijacks the connection,
// or aborts it where it cannot). Requests already admitted finish normally.
func (t *Target) SetDown(down bool) { t.down.Store(down) }

// Stats returns the counters now.
func (t *Target) Stats() Stats {
	t.mu.Lock()
	capacity, queued := t.capacity, t.queued
	t.mu.Unlock()
	s := Stats{
		Arrivals:  t.arrivals.Load(),
		OK:        t.ok.Load(),
		Shed:      t.shed.Load(),
		Expired:   t.expired.Load(),
		Collapsed: t.collapsed.Load(),
		Down:      t.downN.Load(),
		Canceled:  t.canceled.Load(),
		Zombies:   t.zombieN.Load(),
		InFlight:  t.inFlight.Load(),
		Serving:   t.serving.Load(),
		Queued:    int64(queued),
		Capacity:  capacity,
		ByStatus:  map[int]uint64{},
	}
	add := func(code int, n uint64) {
		if n > 0 {
			s.ByStatus[code] += n
		}
	}
	add(http.StatusOK, s.OK)
	add(http.StatusServiceUnavailable, s.Shed+s.Expired)
	add(http.StatusInternalServerError, s.Collapsed)
	if !t.downClose {
		add(http.StatusServiceUnavailable, s.Down)
	}
	return s
}

// action is what the model decided for one arrival.
type action uint8

const (
	actServe    action = iota // serve after wait (the time spent queued), then Latency
	actShed                   // 503 at once
	actExpire                 // hold a queue place for wait (QueueTimeout), then 503
	actCollapse               // 500 after Latency
)

type verdict struct {
	act  action
	wait time.Duration
	// queued is set in rate mode when the request holds a queue place it
	// must give back after waiting.
	queued bool
	// slot is set in concurrent mode when the request holds a service slot
	// it must release, from start on; w when it waits for one in the queue.
	slot  bool
	start time.Time
	w     *waiter
}

// A waiter queues for a concurrent-mode slot. Its fields are guarded by
// Target.mu; start is also safe to read once ready is closed.
type waiter struct {
	ready   chan struct{} // closed when a slot is handed over
	arrived time.Time
	granted bool
	// start is when the slot became the waiter's on the target's
	// schedule: when the request before it was due to finish, or when it
	// arrived if later. A grant that reaches the waiter late (a busy
	// machine, a late timer) does not delay the service: it ends at
	// start + Latency, so the servers keep their capacity exactly.
	start time.Time
}

// bucketSize is the rate-mode bucket: Capacity × Burst tokens, at least one.
// Callers hold mu or own t exclusively.
func (t *Target) bucketSize() float64 {
	return math.Max(1, t.capacity*t.burst.Seconds())
}

func (t *Target) refill(now time.Time) {
	if dt := now.Sub(t.last); dt > 0 {
		t.tokens = math.Min(t.bucketSize(), t.tokens+t.capacity*dt.Seconds())
		t.last = now
	}
}

// admit decides one arrival at time now. It is the whole model; ServeHTTP
// only carries out the verdict.
func (t *Target) admit(now time.Time) verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.concurrent {
		return t.admitConcurrent(now)
	}
	t.refill(now)
	if t.model == Collapse {
		x := t.meter.observe(now)
		if !t.collapseSucceeds(x) {
			return verdict{act: actCollapse}
		}
	}
	if t.tokens >= 1 {
		t.tokens--
		return verdict{act: actServe}
	}
	if t.queued >= t.depth { // also every model but Queue and Backlog: depth 0
		return verdict{act: actShed}
	}
	// Reserve the next token: it comes when the deficit is paid back.
	wait := time.Duration((1 - t.tokens) / t.capacity * float64(time.Second))
	t.queued++
	if wait > t.qtimeout {
		// It would not be served in time: it holds its queue place until
		// the timeout and then fails, without taking anyone's token.
		return verdict{act: actExpire, wait: t.qtimeout, queued: true}
	}
	t.tokens--
	return verdict{act: actServe, wait: wait, queued: true}
}

func (t *Target) admitConcurrent(now time.Time) verdict {
	limit := int(t.capacity)
	if t.model == Collapse {
		// Everyone gets in; the crowd decides how many succeed.
		t.inService++
		if !t.collapseSucceeds(float64(t.inService)) {
			return verdict{act: actCollapse, slot: true, start: now}
		}
		return verdict{act: actServe, slot: true, start: now}
	}
	if t.inService < limit && len(t.waiters) == 0 {
		t.inService++
		return verdict{act: actServe, slot: true, start: now}
	}
	if t.queued >= t.depth {
		return verdict{act: actShed}
	}
	w := &waiter{ready: make(chan struct{}), arrived: now}
	t.waiters = append(t.waiters, w)
	t.queued++
	return verdict{act: actServe, wait: t.qtimeout, w: w}
}

// collapseSucceeds runs the Collapse model for one arrival seen at load x:
// the success probability is goodput(x)/x, spread evenly over arrivals by
// error diffusion so that the count of successes is exact, not random.
func (t *Target) collapseSucceeds(x float64) bool {
	p := 1.0
	if c := t.capacity; x > c {
		p = math.Max(0, c*(1-(x-c)/(2*c))) / x
	}
	t.acc += p
	if t.acc >= 1 {
		t.acc--
		return true
	}
	return false
}

// release frees a concurrent-mode service slot that became free at the
// given time on the target's schedule, handing it to the first waiter when
// there is room under the (possibly changed) capacity.
func (t *Target) release(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inService--
	t.grantWaiters(at)
}

// grantWaiters hands slots free since at to waiters in arrival order.
// Callers hold mu.
func (t *Target) grantWaiters(at time.Time) {
	for len(t.waiters) > 0 && t.inService < int(t.capacity) {
		w := t.waiters[0]
		t.waiters = t.waiters[1:]
		t.queued--
		t.inService++
		w.granted = true
		w.start = at
		if w.arrived.After(at) {
			w.start = w.arrived
		}
		close(w.ready)
	}
}

// abandon takes a waiter that timed out or was canceled out of the queue. It
// reports false when the waiter was granted a slot in the meantime: then the
// slot is the caller's to use or release.
func (t *Target) abandon(w *waiter) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.granted {
		return false
	}
	for i, x := range t.waiters {
		if x == w {
			t.waiters = append(t.waiters[:i], t.waiters[i+1:]...)
			break
		}
	}
	t.queued--
	return true
}

func (t *Target) leaveQueue() {
	t.mu.Lock()
	t.queued--
	t.mu.Unlock()
}

// ServeHTTP answers one request by the target's model.
func (t *Target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.arrivals.Add(1)
	t.inFlight.Add(1)
	defer t.inFlight.Add(-1)
	if t.down.Load() {
		t.downN.Add(1)
		if t.downClose {
			resetConn(w)
			return
		}
		answer(w, http.StatusServiceUnavailable, "down\n")
		return
	}
	v := t.admit(t.clk.Now())
	done := r.Context().Done()
	if t.zombies {
		// A sync worker does not notice that its client left until it has
		// done the work and answers into a closed connection: neither the
		// queue nor the service time watches the client.
		done = nil
	}
	if v.act == actShed {
		t.shed.Add(1)
		answer(w, http.StatusServiceUnavailable, "over capacity\n")
		return
	}
	if v.w != nil { // concurrent queue: wait for a slot or the timeout
		switch t.await(v.w, v.wait, done) {
		case actExpire:
			t.expire(w)
			return
		case actShed: // the client left
			t.canceled.Add(1)
			return
		}
		v.slot, v.start = true, t.granted(v.w)
	} else if v.queued { // rate queue: hold the place for wait
		ok := t.sleep(v.wait, done)
		t.leaveQueue()
		if !ok {
			t.canceled.Add(1)
			return
		}
		if v.act == actExpire { // the place never became a token
			t.expire(w)
			return
		}
	}
	service := time.Duration(t.latency.Load())
	if v.slot {
		// The slot is held until start + service on the target's schedule,
		// not for service from now, so lateness does not add up from one
		// request to the next; a request that leaves frees it at once.
		finish := v.start.Add(service)
		service = finish.Sub(t.clk.Now())
		defer func() { t.release(minTime(finish, t.clk.Now())) }()
	}
	t.serving.Add(1)
	served := t.sleep(service, done)
	t.serving.Add(-1) // before the slot is released, so Serving never overcounts
	if !served || (t.zombies && r.Context().Err() != nil) {
		t.canceled.Add(1)
		if served {
			t.zombieN.Add(1)
		}
		return
	}
	if v.act == actCollapse {
		t.collapsed.Add(1)
		answer(w, http.StatusInternalServerError, "collapsed\n")
		return
	}
	t.ok.Add(1)
	answer(w, http.StatusOK, "ok\n")
}

// granted is when a granted waiter's slot became its own.
func (t *Target) granted(w *waiter) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return w.start
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// expire answers a request whose queue timeout came first.
func (t *Target) expire(w http.ResponseWriter) {
	t.expired.Add(1)
	answer(w, http.StatusServiceUnavailable, "queue timeout\n")
}

// await waits in the concurrent queue for a slot until timeout (0: no
// timeout). It returns actServe when the request got a slot, actExpire when
// the timeout came first, and actShed (never answered) when the client left.
func (t *Target) await(wt *waiter, timeout time.Duration, done <-chan struct{}) action {
	var expired <-chan time.Time // nil: never
	if timeout > 0 {
		timer := t.clk.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C()
	}
	gaveUp := actExpire
	select {
	case <-wt.ready:
		return actServe
	case <-expired:
	case <-done:
		gaveUp = actShed
	}
	if !t.abandon(wt) {
		return actServe // the slot arrived as we gave up: use it
	}
	return gaveUp
}

// sleep waits d on the target's clock; false if done closed first.
func (t *Target) sleep(d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	timer := t.clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-done:
		return false
	}
}

func answer(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

// resetConn drops the connection without an answer. On HTTP/1 it hijacks
// the connection and closes it with linger 0, so the client sees a reset;
// otherwise it aborts the handler, which the server turns into a dropped
// connection or stream.
func resetConn(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}
