package phase

import "time"

// Pause is a worker's wait on one reusable timer: a retry's backoff, a
// script's sleep. The zero value is ready; it belongs to one goroutine.
type Pause struct{ t *time.Timer }

// Wait waits d, or until stop or abort closes (a nil channel never does),
// and reports whether the whole of d passed.
func (p *Pause) Wait(d time.Duration, stop, abort <-chan struct{}) bool {
	if p.t == nil {
		p.t = time.NewTimer(d)
	} else {
		p.t.Reset(d)
	}
	select {
	case <-p.t.C:
		return true
	case <-stop:
	case <-abort:
	}
	p.t.Stop()
	return false
}

// Stop releases the timer.
func (p *Pause) Stop() {
	if p.t != nil {
		p.t.Stop()
	}
}
