package engine

import (
	"time"

	"github.com/throttlekit/throttle/internal/phase"
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

// newWorker is the phase's worker factory.
func (e *Engine) newWorker(id int) (phase.Worker, error) {
	return &worker{e: e, r: e.driver.Runner(), next: id % len(e.reqs)}, nil
}

// Iterate runs one iteration of the next target that was due at due.
func (w *worker) Iterate(due time.Time) {
	e := w.e
	target := w.next
	if w.next++; w.next == len(e.reqs) {
		w.next = 0
	}
	e.meter.EndIteration(w.r.Iterate(&e.reqs[target], due, &w.res))
}

// Close releases the worker's connections.
func (w *worker) Close() { w.r.Close() }
