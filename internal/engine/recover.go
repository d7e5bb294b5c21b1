package engine

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Panics is where a run recovers the Go panics of throttle's own code (a
// bug of throttle's, not the target's or the script's): each is counted,
// the first is logged, and the call, attempt, iteration or stream it broke
// fails while the run goes on. The zero value logs to slog's default; a
// nil *Panics still recovers, counting nothing.
type Panics struct {
	// Logger receives the first panic's line (nil: slog.Default()).
	Logger *slog.Logger
	n      atomic.Int64
}

// Count is how many panics were recovered so far.
func (p *Panics) Count() int64 {
	if p == nil {
		return 0
	}
	return p.n.Load()
}

// HostPanic is a recovered Go panic as an error.
type HostPanic struct {
	// In is the kind of goroutine or call it broke ("an iteration", "a
	// WebSocket reader", "a URL request").
	In    string
	Value any
	// Where is the function and file:line that panicked.
	Where string
}

func (p *HostPanic) Error() string {
	return fmt.Sprintf("internal error: a Go panic in throttle's host code (in %s: %v at %s), recovered", p.In, p.Value, p.Where)
}

// Recover, deferred directly (defer p.Recover("…", &err)), turns a Go
// panic of the function deferring it into *err, a *HostPanic: counted
// every time, logged the first time. Without a panic it does nothing.
// It is the one recovery every goroutine and call of throttle's shares.
func (p *Panics) Recover(in string, err *error) {
	x := recover()
	if x == nil {
		return
	}
	hp := &HostPanic{In: in, Value: x, Where: panicSite()}
	*err = hp
	if p == nil || p.n.Add(1) != 1 {
		return
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Error(hp.Error() + "; it failed what it ran and the run goes on (further panics are counted, not logged)")
}

// panicSite is the function and file:line where the panic being recovered
// was raised: the first frame outside the runtime below the deepest
// runtime.gopanic (sobek recovers and panics again on the way up, so the
// nearest one is sobek's).
func panicSite() string {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	site, seenPanic := "unknown", false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			seenPanic = true
		case seenPanic && !strings.HasPrefix(f.Function, "runtime."):
			site, seenPanic = fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line), false
		}
		if !more {
			return site
		}
	}
}

// attemptHook, set by tests only, runs at the start of every attempt (a
// test panics there, as a bug in the request path would).
var attemptHook func(req *Request)

// readHook, set by tests only, runs when a request is written and before
// its answer is read (raw transport) or read from (event loop): a test
// holds the reader there, as a generator short of CPU does.
var readHook func()

// safeAttempt is attempt with a Go panic in it recovered: the attempt
// fails, class other, and the runner's connection, in an unknown state,
// is replaced.
func (r *Runner) safeAttempt(req *Request, sent time.Time, res *Response) time.Time {
	end, err := r.attemptRecovered(req, sent, res)
	if err == nil {
		return end
	}
	end = time.Now()
	res.Err, res.Status, res.Proto = err, 0, ""
	res.Elapsed = end.Sub(sent)
	res.Class, res.ErrorCode, res.Failed = ClassOther, ErrorGeneric, true
	if r.d.std == nil {
		r.t.close()
		r.t = r.d.newTransport()
	}
	return end
}

func (r *Runner) attemptRecovered(req *Request, sent time.Time, res *Response) (_ time.Time, err error) {
	defer r.d.cfg.Panics.Recover("a request", &err)
	if attemptHook != nil {
		attemptHook(req)
	}
	return r.attempt(req, sent, res), nil
}
