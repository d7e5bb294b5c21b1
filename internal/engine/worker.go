package engine

import (
	"context"
	"time"
)

// worker runs iterations one at a time through its own Runner. Its fields
// are its own: nothing on the hot path is shared but the Meter's atomic
// counters, the gate and the driver's read-only settings.
type worker struct {
	e    *Engine
	r    *Runner
	next int      // round-robin position in the targets
	res  Response // the last attempt, reused
}

func (e *Engine) newWorker(id int) *worker {
	e.workerCount.Add(1)
	return &worker{e: e, r: e.driver.Runner(), next: id % len(e.reqs)}
}

// serve is a rate-mode worker: it runs the arrival it was started for, then
// every arrival handed to it until the work channel closes.
func (w *worker) serve(first time.Time) {
	defer w.e.wg.Done()
	defer w.r.Close()
	w.iterate(first)
	for due := range w.e.work {
		w.iterate(due)
	}
}

// loop is a concurrency-mode worker: back to back iterations, each holding
// a permit of the concurrency gate, until the phase stops.
func (w *worker) loop(ctx context.Context) {
	defer w.e.wg.Done()
	defer w.r.Close()
	for {
		p, err := w.e.gate.Acquire(ctx)
		if err != nil {
			return
		}
		// A closed loop has no schedule: the iteration starts when sent
		// (zero due), and no schedule lag is counted.
		w.iterate(time.Time{})
		p.Release()
	}
}

// iterate runs one iteration of the next target that was due at due.
func (w *worker) iterate(due time.Time) {
	e := w.e
	target := w.next
	if w.next++; w.next == len(e.reqs) {
		w.next = 0
	}
	e.meter.EndIteration(w.r.Iterate(&e.reqs[target], due, &w.res))
}
