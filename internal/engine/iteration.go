package engine

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/phase"
)

// This file is the iteration seam: the one place where an iteration's
// attempts are sent, timed, classified and counted. The URL/targets engine
// and the script runner both run their requests through a Runner.
//
// Wiring, for a host (a script runner, say):
//
//	meter := engine.NewMeter()                   // the phase's counters; a governor.LoadCounters
//	d, err := engine.NewDriver(engine.DriverConfig{Meter: meter, Latency: rec, Tries: 1})
//	defer d.Close()
//	gov, _ := governor.New(limits, meter, ...)   // the governor reads the same counters
//	// per VU (one goroutine each):
//	r := d.Runner()
//	defer r.Close()
//	var res engine.Response
//	out := r.Iterate(&engine.Request{Method: "GET", URL: "http://127.0.0.1:8080/"}, due, &res)
//	// res holds the last attempt: Status, Header, Body, Timings, Err, ErrorCode, Class, Failed.
//	meter.EndIteration(out) // only where one Iterate is one iteration

// Request is one HTTP request a Runner sends. A Request is read-only while
// Iterate runs it; a host may send the same Request again and again (the
// URL engine does: a Runner then skips rebuilding the wire request when it
// sees the same *Request twice in a row — so do not mutate a Request between
// two Iterate calls of the same Runner; make a new one).
type Request struct {
	// Method is the HTTP method; "" means GET.
	Method string
	// URL is absolute, with scheme http or https and a host.
	URL string
	// Header is sent as is (nil: none). A "Host" entry, or Host below,
	// sets the request's Host.
	Header http.Header
	// Host overrides the Host header when not "".
	Host string
	// Body is sent with the request; nil for none.
	Body []byte
	// Timeout bounds one attempt, from sending to the last body byte,
	// redirects included; 0 takes the driver's DriverConfig.Timeout.
	Timeout time.Duration
	// Redirects is how many redirects an attempt follows (k6's
	// `redirects`); 0 follows none, and the 3xx is the attempt's response.
	// A 303, or a 301/302 answering anything but GET or HEAD, is followed
	// with a GET without body; 307 and 308 repeat the method and body.
	Redirects int
	// DiscardBody drops the response's headers and body once the attempt
	// is timed and classified: Response.Header and Body stay nil. The URL
	// engine sets it; a script that reads the response must not. The body
	// is read as it arrives and dropped, so it costs no memory whatever its
	// size.
	DiscardBody bool
	// KeepHeader keeps Response.Header when DiscardBody drops the body (a
	// script's responseType "none" still reads headers and cookies).
	KeepHeader bool
}

// Timings are one attempt's phases, named as k6 names them. The fasthttp
// transport (HTTP/1.1) measures them on the runner's own connection: a new
// connection shows Connecting (TCP) and TLSHandshaking; Sending runs to the
// last byte written, Waiting to the first byte read (time to first byte is
// Sending + Waiting), Receiving to the last. Blocked is always 0 there: a
// runner owns its connections and never waits for one. The net/http
// transport (HTTP/2, --http2) measures them with net/http/httptrace, where
// Blocked is the wait for a connection from the shared pool. After
// redirects, the timings are the last response's.
//
// On Linux the raw transport and the event loop end Waiting and Receiving
// at the kernel's receive stamps of the reads that brought the answer's
// first and last bytes (rxstamp_linux.go; THROTTLE_RXSTAMP=0 turns it
// off), not at the reads: an answer left in the socket while the
// generator was busy elsewhere does not lengthen them (that wait is the
// read delay, counted apart: Meter.ReadDelay). Sending and Connecting stay
// user space; an answer that arrived before the writer's clock reading
// after its write (the writer held between the two) has Sending 0 and
// Waiting from the send's start (rxWrote). fasthttp, net/http, TLS and other systems time every phase
// in user space, as k6 does.
type Timings struct {
	Blocked, Connecting, TLSHandshaking, Sending, Waiting, Receiving time.Duration
	// Duration is Sending + Waiting + Receiving, as in k6: the request
	// itself, without connection setup.
	Duration time.Duration
}

// split sets Sending, Waiting, Receiving and Duration from the request's
// marks: sending from start to wrote (the last byte written), waiting to
// first (the first byte read), receiving to end. A mark not reached (zero,
// or out of order after an error) collapses its phase to 0.
func (t *Timings) split(start, wrote, first, end time.Time) {
	if wrote.IsZero() || wrote.Before(start) {
		wrote = start
	}
	if first.IsZero() || first.Before(wrote) {
		first = wrote
	}
	if end.Before(first) {
		end = first
	}
	t.Sending, t.Waiting, t.Receiving = wrote.Sub(start), first.Sub(wrote), end.Sub(first)
	t.Duration = t.Sending + t.Waiting + t.Receiving
}

// TTFB is the time to the first response byte from the start of sending.
func (t Timings) TTFB() time.Duration { return t.Sending + t.Waiting }

// Response is what became of one attempt. Iterate fills it with the
// iteration's last attempt.
type Response struct {
	// Status is the response's status code; 0 when Err is set.
	Status int
	// Proto is "HTTP/1.1", "HTTP/2.0", ...; "" when Err is set.
	Proto string
	// URL is the URL of the last request sent (it differs from the
	// Request's after redirects).
	URL string
	// Header and Body are the response's, unless Request.DiscardBody.
	// The fasthttp transport leaves Header nil and keeps the headers raw
	// until Headers (or HeaderValues) is called: read them through those.
	Header http.Header
	Body   []byte
	// Err is the attempt's transport error (nil when a response arrived),
	// and ErrorCode its code: see ErrorCode.
	Err       error
	ErrorCode int
	// Class is the attempt's outcome class. A FailedFunc sees the class
	// the attempt has if it fails (the transport error's class, or the
	// status's: 5xx, 429 or other); after it, Class is ClassOK unless the
	// attempt failed. ClassSlow marks an attempt that failed only because
	// it outlived DriverConfig.Slow.
	Class Class
	// Failed is the verdict of the driver's FailedFunc (or FailOn), and
	// of its Slow budget.
	Failed bool
	// Elapsed is the attempt's wall time, from when it was sent to its
	// last byte, redirects and connection setup included: the latency
	// the Slow budget and Load.Latency use.
	Elapsed time.Duration
	// Timings are the last response's phases.
	Timings Timings
	// BytesSent and BytesReceived count the attempt's bytes: on the wire
	// (TLS records included) for fasthttp; for net/http, where
	// connections are shared, the request's and response's header and
	// body sizes.
	BytesSent, BytesReceived int64
	// Tries is how many attempts the iteration made.
	Tries int
	// Hops are the redirects the attempt followed before its last
	// response, in order: each is one request on the wire, which k6
	// counts and times as its own (http_reqs counts every hop). Status,
	// Timings and bytes above are the last response's plus, for bytes,
	// every hop's; nil when no redirect was followed.
	Hops []Hop

	location  string // a redirect's Location header, set by a transport for a 3xx
	rawHeader []byte // the headers not yet made into Header (header.go)
	// rxDelay is how long the answer's first byte waited in the kernel
	// for the generator to read it, when rxStamped (the read came with
	// the kernel's receive stamp: rxstamp_linux.go).
	rxDelay   time.Duration
	rxStamped bool
}

// Hop is one redirect an attempt followed: the request sent and the 3xx
// it got.
type Hop struct {
	Method, URL string
	Status      int
	Timings     Timings
	// Failed is the driver's FailedFunc on the 3xx alone (k6's expected
	// statuses pass a redirect).
	Failed                   bool
	BytesSent, BytesReceived int64
}

// reset empties r for the next attempt. Header and Body are made afresh
// for every response that keeps them, so a host may hold on to them.
func (r *Response) reset() { *r = Response{} }

// FailedFunc decides whether an attempt failed. It sees the response with
// Class set to the class the attempt has if it fails; it must be safe for
// concurrent use and quick. The URL engine's is FailOn's rule; the script
// runner's is k6's expected statuses (or a responseCallback).
type FailedFunc func(r *Response) bool

// Outcome is what became of an iteration.
type Outcome uint8

// The outcomes of an iteration.
const (
	// IterationOK: its last attempt did not fail.
	IterationOK Outcome = iota
	// IterationFailed: every try failed.
	IterationFailed
	// IterationAborted: the phase's abort cut its attempt off; it is
	// neither ok nor failed, and says nothing about the target.
	IterationAborted
)

// DriverConfig is what a phase's runners share.
type DriverConfig struct {
	// Meter receives every attempt (required).
	Meter *Meter
	// Latency, if set, receives every resolved attempt's latency from its
	// intended start (see Runner.Iterate).
	Latency LatencyRecorder
	// Tries is how many attempts an iteration makes at most (default 1),
	// with a jittered exponential backoff (BackoffBase, BackoffCap)
	// between them.
	Tries int
	// Timeout bounds one attempt unless the Request says otherwise
	// (default DefaultTimeout).
	Timeout time.Duration
	// Failed decides which attempts fail; nil uses FailOn.
	Failed FailedFunc
	// FailOn is the rule when Failed is nil (default DefaultFailOn).
	FailOn *FailOn
	// Slow, when > 0, is a latency budget: an attempt that would be ok
	// but whose Elapsed exceeds Slow fails with class ClassSlow.
	Slow time.Duration
	// HTTP2 sends through net/http (HTTP/2 where the server offers it over
	// TLS) instead of fasthttp's HTTP/1.1.
	HTTP2 bool
	// RawHTTP sends plain http:// requests over the raw transport (raw.go:
	// one net.Conn per host per runner, no fasthttp client) and the rest
	// over fasthttp; a script's request lanes ask for it. TransportEnv
	// set to "fasthttp" keeps every request on fasthttp. HTTP2 overrides
	// it.
	RawHTTP bool
	// Insecure skips TLS certificate verification.
	Insecure bool
	// Resolver looks up host names (nil: the system's). Tests give one
	// that answers on the machine, so a name that must not resolve never
	// sends a DNS query out of it.
	Resolver *net.Resolver
	// BodyLimit is the most bytes a kept response body may hold (default
	// DefaultBodyLimit); a longer body fails its attempt with
	// ErrBodyTooLarge (class other) and is not read past the limit. A
	// discarded body (Request.DiscardBody) has no limit: it is read and
	// dropped as it arrives.
	BodyLimit int64
	// Conns sizes net/http's idle pool (fasthttp runners own one
	// connection per host each and ignore it); default DefaultMaxVUs.
	Conns int
	// Stop, when closed, ends iterations after their current attempt: no
	// new try starts. nil never stops.
	Stop <-chan struct{}
	// Abort, when done, cuts in-flight attempts off; they end
	// IterationAborted and count as Meter's aborted. nil never aborts.
	Abort context.Context
	// Panics recovers a Go panic in an attempt (throttle's bug): the
	// attempt fails, class other, with the *HostPanic as its error, and
	// its runner's connection is replaced. nil: recovered, not counted.
	Panics *Panics
	// Buffers, if set, are the fasthttp connection buffers this driver's
	// runners take, shared with other drivers; nil: the driver's own.
	Buffers *SharedBuffers
}

// DefaultBodyLimit is the most bytes a kept response body holds unless
// DriverConfig.BodyLimit says otherwise: large enough for any page or API
// answer a script reads, small enough that a runaway body costs a bounded
// amount per VU.
const DefaultBodyLimit = 32 << 20

// keepBody reads r to its end, holding at most limit bytes: past them it
// stops reading and fails with ErrBodyTooLarge.
func keepBody(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, errBodyLimit(limit)
	}
	return b, err
}

// Driver is what a phase's runners share: the counters, the settings and
// the net/http transport. It is safe for concurrent use; make one with
// NewDriver and a Runner per worker (VU) with Runner.
type Driver struct {
	cfg    DriverConfig
	failed FailedFunc
	std    *stdTransport // net/http; nil unless HTTP2
	fast   *fastShared   // fasthttp settings shared by every runner
	raw    bool          // runners take the raw transport (RawHTTP)
}

// NewDriver checks cfg, fills its defaults and builds the transport.
func NewDriver(cfg DriverConfig) (*Driver, error) {
	switch {
	case cfg.Meter == nil:
		return nil, errors.New("driver needs a Meter")
	case cfg.Tries < 0:
		return nil, errors.New("tries must be >= 1")
	case cfg.Timeout < 0:
		return nil, errors.New("timeout must be > 0")
	case cfg.Slow < 0:
		return nil, errors.New("slow must be >= 0")
	}
	if cfg.Tries == 0 {
		cfg.Tries = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Conns <= 0 {
		cfg.Conns = DefaultMaxVUs
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.Abort == nil {
		cfg.Abort = context.Background()
	}
	d := &Driver{cfg: cfg, failed: cfg.Failed}
	if d.failed == nil {
		f := cfg.FailOn
		if f == nil {
			parsed, _ := ParseFailOn(DefaultFailOn)
			f = &parsed
		}
		d.failed = f.failedResponse
	}
	if cfg.HTTP2 {
		d.std = newStdTransport(cfg)
	} else {
		d.fast = newFastShared(cfg)
		if cfg.RawHTTP {
			name, err := LaneTransport(false)
			if err != nil {
				return nil, err
			}
			d.raw = name == TransportRaw
		}
	}
	return d, nil
}

// LaneTransport names the transport a driver made with RawHTTP (a script's
// request lane) sends plain http:// requests with, as its Transport
// reports it, for HTTP2 as given: TransportNetHTTP with http2, else
// TransportRaw unless TransportEnv asks for fasthttp. An unknown
// TransportEnv is NewDriver's error.
func LaneTransport(http2 bool) (string, error) {
	if http2 {
		return TransportNetHTTP, nil
	}
	name, err := transportName("")
	if err != nil {
		return "", err
	}
	if name == TransportFastHTTP {
		return TransportFastHTTP, nil
	}
	return TransportRaw, nil
}

// Transport names the transport the driver's runners send plain http://
// requests with: TransportRaw, TransportFastHTTP or TransportNetHTTP.
func (d *Driver) Transport() string {
	switch {
	case d.std != nil:
		return TransportNetHTTP
	case d.raw:
		return TransportRaw
	}
	return TransportFastHTTP
}

// newTransport is a new runner's transport.
func (d *Driver) newTransport() transport {
	switch {
	case d.std != nil:
		return d.std
	case d.raw:
		return d.fast.newRaw()
	}
	return d.fast.newConn()
}

// Meter returns the counters the driver's runners record into.
func (d *Driver) Meter() *Meter { return d.cfg.Meter }

// Close releases the shared transport's idle connections. Runners close
// their own.
func (d *Driver) Close() {
	if d.std != nil {
		d.std.close()
	}
}

// transport sends one request once. A transport belongs to one Runner and
// is used by its goroutine only.
type transport interface {
	// send sends req once within timeout, starting now (the caller's
	// clock reading, so that an attempt reads the clock as few times as it
	// can), and fills res's Status, Proto, Header and Body (unless
	// req.DiscardBody), location (for a 3xx), Timings, bytes, and Err for
	// a transport error. It returns when the attempt ended. It does not
	// classify.
	send(req *Request, now time.Time, timeout time.Duration, res *Response) (end time.Time)
	close()
}

// Runner runs iterations, one at a time: it is one worker's (one VU's)
// and not safe for concurrent use. Over fasthttp it owns one keep-alive
// connection per host it talks to, so a phase's connections are sized to
// its workers.
type Runner struct {
	d     *Driver
	t     transport
	pause phase.Pause // backoff between tries
}

// Runner makes a runner; Close it when its worker ends.
func (d *Driver) Runner() *Runner {
	return &Runner{d: d, t: d.newTransport()}
}

// Close releases the runner's connections and timer.
func (r *Runner) Close() {
	if r.d.std == nil {
		r.t.close()
	}
	r.pause.Stop()
}

// Iterate runs one iteration of req that was due at due: up to Tries
// attempts with backoff between them, each counted into the Meter (started,
// then its class, its latency) and, when resolved, into the latency
// recorder. res receives the last attempt. The first attempt's recorded
// latency runs from due, the intended start, so a late worker's delay counts
// as a user would feel it (no coordinated omission; the phase counts the
// schedule lag itself); a retry's latency runs from when it was sent. A zero
// due means "now".
//
// Iterate does not count the iteration itself: a host for which one
// Iterate is one iteration calls Meter.EndIteration with the outcome.
func (r *Runner) Iterate(req *Request, due time.Time, res *Response) Outcome {
	d, m := r.d, r.d.cfg.Meter
	m.inflight.Add(1)
	defer m.inflight.Add(-1)
	sent := time.Now()
	if due.IsZero() {
		due = sent
	}
	start := due
	for try := 1; ; try++ {
		res.reset()
		res.Tries = try
		m.started.Add(1)
		end := r.safeAttempt(req, sent, res)
		if res.Err != nil && d.cfg.Abort.Err() != nil {
			m.aborted.Add(1)
			return IterationAborted
		}
		d.resolve(res, end.Sub(start))
		if !res.Failed {
			return IterationOK
		}
		if try >= d.cfg.Tries || !r.backoff(try) {
			return IterationFailed
		}
		sent = time.Now()
		start = sent
	}
}

// attempt sends req once, following its redirects, classifies it, and
// returns when it ended.
func (r *Runner) attempt(req *Request, sent time.Time, res *Response) (end time.Time) {
	d := r.d
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = d.cfg.Timeout
	}
	deadline := sent.Add(timeout)
	cur := req
	res.URL = req.URL
	now := sent
	for hop := 0; ; hop++ {
		if hop > 0 {
			now = time.Now()
		}
		left := deadline.Sub(now)
		if left <= 0 {
			res.Err = errAttemptTimeout
			end = now
			break
		}
		end = r.t.send(cur, now, left, res)
		if res.Err != nil || res.location == "" || hop >= req.Redirects || !isRedirect(res.Status) {
			break
		}
		next, err := redirect(cur, res)
		if err != nil {
			res.Err = err
			break
		}
		r.hop(cur, res)
		cur = next
		res.URL = next.URL
		res.Header, res.rawHeader, res.Body = nil, nil, nil
	}
	res.Elapsed = end.Sub(sent)
	if res.Err != nil {
		res.Status, res.Proto = 0, ""
	}
	d.judge(res)
	return end
}

// judge classifies an attempt that ended (Err, Status and Elapsed set):
// its Class, ErrorCode and the Failed verdict (FailedFunc, then Slow).
// Every transport's attempts go through it.
func (d *Driver) judge(res *Response) {
	res.Class, res.ErrorCode = classify(res.Err, res.Status)
	res.Failed = d.failed(res)
	switch {
	case res.Failed:
	case d.cfg.Slow > 0 && res.Elapsed > d.cfg.Slow:
		res.Failed, res.Class = true, ClassSlow
	default:
		res.Class = ClassOK
	}
	if res.Failed && res.Class == ClassOK {
		// A FailedFunc failed what the status rule would not (a 2xx a
		// script did not expect): it still needs a failure class.
		res.Class = ClassOther
	}
}

// resolve counts a judged attempt that was not aborted into the Meter
// (its class, its Elapsed, unreachable or not) and its latency, from its
// intended start, into the latency recorder.
func (d *Driver) resolve(res *Response, latency time.Duration) {
	m := d.cfg.Meter
	m.resolve(res.Class, res.Elapsed)
	if res.rxStamped {
		m.readDelay(res.rxDelay)
	}
	if unreachable(res) {
		m.unreach.Add(1)
	}
	if d.cfg.Latency != nil {
		d.cfg.Latency.Record(latency)
	}
}

// hop records the redirect res just got for cur as one of res.Hops, with
// the bytes sent and received since the previous hop.
func (r *Runner) hop(cur *Request, res *Response) {
	var sent, recv int64
	for _, h := range res.Hops {
		sent, recv = sent+h.BytesSent, recv+h.BytesReceived
	}
	j := Response{Status: res.Status, URL: cur.URL}
	j.Class, j.ErrorCode = classify(nil, res.Status)
	res.Hops = append(res.Hops, Hop{Method: cur.Method, URL: cur.URL, Status: res.Status, Timings: res.Timings,
		Failed: r.d.failed(&j), BytesSent: res.BytesSent - sent, BytesReceived: res.BytesReceived - recv})
}

// errAttemptTimeout is an attempt whose redirects used up its timeout.
var errAttemptTimeout = timeoutErr("attempt timed out")

// errBodyTimeout is a body whose reading the attempt's deadline ended.
var errBodyTimeout = timeoutErr("body read timed out")

type timeoutErr string

func (e timeoutErr) Error() string { return string(e) }
func (e timeoutErr) Timeout() bool { return true }

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// redirect is the request that follows res's redirect of cur.
func redirect(cur *Request, res *Response) (*Request, error) {
	base, err := url.Parse(cur.URL)
	if err != nil {
		return nil, err
	}
	loc, err := base.Parse(res.location)
	if err != nil {
		return nil, err
	}
	next := *cur
	next.URL = loc.String()
	if loc.Host != base.Host {
		next.Host = "" // a Host override was for the first host
		if next.Header.Get("Host") != "" {
			next.Header = next.Header.Clone()
			next.Header.Del("Host")
		}
	}
	m := strings.ToUpper(cur.Method)
	if res.Status == 303 || ((res.Status == 301 || res.Status == 302) && m != "GET" && m != "HEAD" && m != "") {
		next.Method, next.Body = "GET", nil
	}
	return &next, nil
}

// backoff pauses before try+1. It returns false, at once, when the phase is
// stopping: a stopping phase starts no new attempts.
func (r *Runner) backoff(try int) bool {
	stop := r.d.cfg.Stop
	select {
	case <-stop:
		return false
	default:
	}
	d := BackoffBase << min(try-1, 16)
	if d > BackoffCap || d <= 0 {
		d = BackoffCap
	}
	d = d/2 + rand.N(d/2+1)
	return r.pause.Wait(d, stop, r.d.cfg.Abort.Done())
}
