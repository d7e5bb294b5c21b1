package script

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/grafana/sobek"
)

// eventLoop is a VU's event loop, as k6 has one per VU: timers and async
// requests finish on other goroutines and queue a callback here; the VU's
// own goroutine runs the callbacks, one at a time, until nothing is
// pending. It is made on first use (a timer, an async request), so a
// script that uses none of it pays one nil check per call.
type eventLoop struct {
	vu *VU
	mu sync.Mutex
	// queue holds callbacks ready to run, put there from any goroutine;
	// wake has a token when the queue is not empty.
	queue []func() error
	wake  chan struct{}
	// pending counts what will queue a callback later (an active timer,
	// an in-flight request); it is touched on the VU's goroutine only.
	pending int
	timers  map[int64]*jsTimer
	nextID  int64
	// gen counts resets: a callback registered before one is dropped.
	gen uint64
}

// jsTimer is one setTimeout or setInterval.
type jsTimer struct {
	t        *time.Timer
	fn       sobek.Callable
	args     []sobek.Value
	every    time.Duration // 0: a timeout
	canceled bool
}

func (vu *VU) eventLoop() *eventLoop {
	if vu.events == nil {
		vu.events = &eventLoop{vu: vu, wake: make(chan struct{}, 1), timers: map[int64]*jsTimer{}}
	}
	return vu.events
}

// enqueue queues fn to run on the VU's goroutine; safe from any goroutine.
func (l *eventLoop) enqueue(fn func() error) {
	l.mu.Lock()
	l.queue = append(l.queue, fn)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// register marks something that will finish on another goroutine: the
// loop does not end before finish has been called (from any goroutine)
// and its callback has run on the VU's. A reset in between drops the
// callback.
func (l *eventLoop) register() (finish func(cb func() error)) {
	l.pending++
	gen := l.gen
	return func(cb func() error) {
		l.enqueue(func() error {
			if l.gen != gen {
				return nil
			}
			l.pending--
			return cb()
		})
	}
}

// addTimer is setTimeout (every 0) and setInterval.
func (l *eventLoop) addTimer(call sobek.FunctionCall, interval bool) sobek.Value {
	vu := l.vu
	fn, ok := sobek.AssertFunction(call.Argument(0))
	if !ok {
		vu.throw("timer callback must be a function, got %v", call.Argument(0))
	}
	d := time.Duration(call.Argument(1).ToFloat() * float64(time.Millisecond))
	if d < 0 || d != d {
		d = 0
	}
	var args []sobek.Value
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2:]...)
	}
	l.nextID++
	id := l.nextID
	tm := &jsTimer{fn: fn, args: args}
	if interval {
		tm.every = max(d, time.Millisecond)
	}
	l.timers[id] = tm
	l.pending++
	var fire func()
	fire = func() {
		l.enqueue(func() error {
			if tm.canceled {
				return nil
			}
			if tm.every == 0 {
				delete(l.timers, id)
				l.pending--
			} else {
				tm.t = time.AfterFunc(tm.every, fire)
			}
			_, err := tm.fn(sobek.Undefined(), tm.args...)
			return err
		})
	}
	tm.t = time.AfterFunc(d, fire)
	return vu.rt.ToValue(id)
}

// clearTimer is clearTimeout and clearInterval; an unknown id does nothing.
func (l *eventLoop) clearTimer(id sobek.Value) {
	if id == nil || sobek.IsUndefined(id) || sobek.IsNull(id) {
		return
	}
	n := id.ToInteger()
	tm, ok := l.timers[n]
	if !ok {
		return
	}
	tm.canceled = true
	if tm.t != nil {
		tm.t.Stop()
	}
	delete(l.timers, n)
	l.pending--
}

// reset drops every timer and queued callback: an iteration that ended
// early (it threw, it was aborted) leaves nothing for the next.
func (l *eventLoop) reset() {
	for id, tm := range l.timers {
		tm.canceled = true
		if tm.t != nil {
			tm.t.Stop()
		}
		delete(l.timers, id)
	}
	l.pending = 0
	l.gen++
	l.mu.Lock()
	l.queue = nil
	l.mu.Unlock()
}

// timerFuncs are setTimeout, clearTimeout, setInterval and clearInterval,
// the globals and k6/timers alike.
func (vu *VU) timerFuncs() map[string]any {
	return map[string]any{
		"setTimeout":    func(call sobek.FunctionCall) sobek.Value { return vu.eventLoop().addTimer(call, false) },
		"setInterval":   func(call sobek.FunctionCall) sobek.Value { return vu.eventLoop().addTimer(call, true) },
		"clearTimeout":  func(id sobek.Value) { vu.eventLoop().clearTimer(id) },
		"clearInterval": func(id sobek.Value) { vu.eventLoop().clearTimer(id) },
	}
}

// trackRejections records promises rejected with no handler yet; one
// still unhandled when the script's call and its loop are done is an
// error, as k6 reports "Uncaught (in promise)".
func (vu *VU) trackRejections(p *sobek.Promise, op sobek.PromiseRejectionOperation) {
	switch op {
	case sobek.PromiseRejectionReject:
		vu.rejected = append(vu.rejected, p)
	case sobek.PromiseRejectionHandle:
		for i, q := range vu.rejected {
			if q == p {
				vu.rejected = append(vu.rejected[:i], vu.rejected[i+1:]...)
				break
			}
		}
	}
}

// errUnsettled is a script's promise that can never settle: nothing is
// pending that could settle it.
var errUnsettled = errors.New("the promise never settled: nothing it waits on is pending (no timer, no request)")

// settle finishes a call into the script, as k6's event loop does: the
// call's own error, or else its timers and async requests run until none
// is pending; a returned promise gives its value, or its rejection as the
// error; a promise rejected with no handler is the error. done is nil on
// the setup VU; closed, it abandons the loop (the phase aborts).
func (vu *VU) settle(v sobek.Value, err error, done <-chan struct{}) (sobek.Value, error) {
	p := promiseOf(v)
	if err == nil && vu.events == nil && len(vu.rejected) == 0 {
		// The fast path: nothing started that the loop must wait for.
		if p == nil {
			return v, nil
		}
		if p.State() == sobek.PromiseStateFulfilled {
			return p.Result(), nil
		}
	}
	if err == nil {
		err = vu.runLoop(p, done)
	}
	if vu.events != nil && err != nil {
		vu.events.reset()
	}
	if err != nil {
		vu.rejected = vu.rejected[:0]
		return nil, err
	}
	if p != nil {
		if p.State() == sobek.PromiseStateFulfilled {
			return p.Result(), nil
		}
		return nil, errUnsettled
	}
	return v, nil
}

// runLoop runs queued callbacks until nothing is pending, p (if any) has
// settled and no rejection is unhandled.
func (vu *VU) runLoop(p *sobek.Promise, done <-chan struct{}) error {
	for {
		if err := vu.unhandled(p); err != nil {
			return err
		}
		l := vu.events
		if l == nil || l.pending == 0 {
			return nil
		}
		select {
		case <-l.wake:
		case <-done:
			return errAborted
		}
		l.mu.Lock()
		q := l.queue
		l.queue = nil
		l.mu.Unlock()
		for _, fn := range q {
			if err := fn(); err != nil {
				return err
			}
			if err := vu.unhandled(p); err != nil {
				return err
			}
		}
	}
}

// unhandled is the error of p's rejection, or of another promise rejected
// with no handler.
func (vu *VU) unhandled(p *sobek.Promise) error {
	if p != nil && p.State() == sobek.PromiseStateRejected {
		return vu.rejection(p.Result())
	}
	if len(vu.rejected) == 0 {
		return nil
	}
	q := vu.rejected[0]
	return fmt.Errorf("Uncaught (in promise) %w", vu.rejection(q.Result()))
}

// promiseOf is v's promise, if v is one.
func promiseOf(v sobek.Value) *sobek.Promise {
	if o, ok := v.(*sobek.Object); ok {
		if p, ok := o.Export().(*sobek.Promise); ok {
			return p
		}
	}
	return nil
}

// call calls fn and settles what it started (settle): k6's way of calling
// an exported function (default, setup, teardown, handleSummary).
// A Go panic in the host code it reaches is recovered (engine.Panics).
func (vu *VU) call(fn sobek.Callable, done <-chan struct{}, args ...sobek.Value) (_ sobek.Value, err error) {
	defer vu.r.panics.Recover("a call into the script", &err)
	v, err := fn(sobek.Undefined(), args...)
	return vu.settle(v, err, done)
}
