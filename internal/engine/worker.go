package engine

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// worker runs iterations one at a time. Its fields are its own: nothing on
// the hot path is shared but the atomic counters, the gate and the
// transport.
type worker struct {
	e     *Engine
	next  int         // round-robin position in the targets
	pause *time.Timer // backoff between tries, reused

	// The attempt deadline, reused from attempt to attempt so that a
	// request costs no context or timer of its own: ctx is cancelled by
	// the deadline timer when an attempt outlives the timeout (or by Abort),
	// and only then replaced. reqs are the targets' prepared requests bound
	// to ctx, made again when ctx is; nil when there are more targets than
	// maxCachedTargets (then each attempt binds its request afresh, one small
	// allocation, rather than every worker holding a copy of a huge list).
	ctx      context.Context
	cancel   context.CancelFunc
	deadline *time.Timer
	reqs     []*http.Request
}

func (e *Engine) newWorker(id int) *worker {
	e.workerCount.Add(1)
	w := &worker{e: e, next: id % len(e.reqs)}
	if len(e.reqs) <= maxCachedTargets {
		w.reqs = make([]*http.Request, len(e.reqs))
	}
	return w
}

// maxCachedTargets bounds the prepared requests a worker keeps.
const maxCachedTargets = 64

// arm starts the deadline of one attempt at target i and returns its request.
func (w *worker) arm(i int) *http.Request {
	if w.ctx == nil {
		w.ctx, w.cancel = context.WithCancel(w.e.hard)
		clear(w.reqs)
		w.deadline = time.AfterFunc(w.e.cfg.Timeout, w.cancel)
	} else {
		w.deadline.Reset(w.e.cfg.Timeout)
	}
	var req *http.Request
	if w.reqs != nil {
		req = w.reqs[i]
	}
	if req == nil {
		req = w.e.reqs[i].WithContext(w.ctx)
		if w.reqs != nil {
			w.reqs[i] = req
		}
	}
	if base := w.e.reqs[i]; base.GetBody != nil {
		req.Body, _ = base.GetBody()
	}
	return req
}

// disarm stops the attempt's deadline and reports whether it had already
// fired: then the attempt timed out and its context is spent.
func (w *worker) disarm() (fired bool) {
	if w.deadline.Stop() {
		return false
	}
	w.cancel()
	w.ctx = nil
	return true
}

// close releases the worker's deadline.
func (w *worker) close() {
	if w.ctx != nil {
		w.deadline.Stop()
		w.cancel()
		w.ctx = nil
	}
}

// serve is a rate-mode worker: it runs the arrival it was started for, then
// every arrival handed to it until the work channel closes.
func (w *worker) serve(first time.Time) {
	defer w.e.wg.Done()
	defer w.close()
	w.iterate(first)
	for due := range w.e.work {
		w.iterate(due)
	}
}

// loop is a concurrency-mode worker: back to back iterations, each holding
// a permit of the concurrency gate, until the phase stops.
func (w *worker) loop(ctx context.Context) {
	defer w.e.wg.Done()
	defer w.close()
	for {
		p, err := w.e.gate.Acquire(ctx)
		if err != nil {
			return
		}
		w.iterate(p.Due())
		p.Release()
	}
}

// iterate runs one iteration that was due at start: up to Tries attempts
// with backoff between them, every attempt counted. The first attempt's
// latency runs from start, the intended start, so a late worker's delay
// counts against the target's latency as a user would feel it (no
// coordinated omission); a retry's runs from when it was sent.
func (w *worker) iterate(start time.Time) {
	e := w.e
	target := w.next
	if w.next++; w.next == len(e.reqs) {
		w.next = 0
	}
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	for try := 1; ; try++ {
		failed, aborted := w.attempt(target, start)
		if aborted {
			return
		}
		if !failed {
			e.iterOK.Add(1)
			return
		}
		if try >= e.cfg.Tries || !w.backoff(try) {
			e.iterFailed.Add(1)
			return
		}
		start = time.Now()
	}
}

// attempt sends req once and counts the outcome. aborted means the engine
// cut it off while stopping: such an attempt is counted apart, never as the
// target's failure, and its latency is not recorded.
func (w *worker) attempt(target int, start time.Time) (failed, aborted bool) {
	e := w.e
	class := ClassOK
	resp, err := e.transport.RoundTrip(w.arm(target))
	if err == nil {
		// Drain the body so the connection goes back to the pool; the
		// attempt ends at its last byte.
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	timedOut := w.disarm()
	if err == nil && e.cfg.FailOn.failedStatus(resp.StatusCode) {
		failed, class = true, statusClass(resp.StatusCode)
	}
	if err != nil {
		if e.hard.Err() != nil {
			e.aborted.Add(1)
			return false, true
		}
		c := errClass(err)
		if timedOut {
			c = ClassTimeout
		}
		if e.cfg.FailOn.failedClass(c) {
			failed, class = true, c
		}
	}
	if e.cfg.Latency != nil {
		e.cfg.Latency.Record(time.Since(start))
	}
	e.classes[class].Add(1)
	return failed, false
}

// backoff pauses before try+1. It returns false, at once, when the phase is
// stopping: a stopping phase starts no new attempts.
func (w *worker) backoff(try int) bool {
	e := w.e
	select {
	case <-e.stop:
		return false
	default:
	}
	d := BackoffBase << min(try-1, 16)
	if d > BackoffCap || d <= 0 {
		d = BackoffCap
	}
	d = d/2 + rand.N(d/2+1)
	if w.pause == nil {
		w.pause = time.NewTimer(d)
	} else {
		w.pause.Reset(d)
	}
	select {
	case <-w.pause.C:
		return true
	case <-e.stop:
		w.pause.Stop()
		return false
	}
}
