package script

import (
	"context"
	"errors"
	"sync"
)

// errRampedDown interrupts a VU's JavaScript when a falling ramping-vus
// stage removed the VU and its gracefulRampDown ran out.
var errRampedDown = errors.New("interrupted: the VU was ramped down and its gracefulRampDown ran out")

// vuStop lets one VU's iteration be cut off on its own (k6's
// gracefulRampDown), the phase running on. Its context is the VU's
// abort: derived from the phase's, it is also cancelled by interrupt.
// An iteration that was cut off leaves it cancelled; the next one starts
// on a fresh context, with fresh request lanes (the old ones were made on
// the cancelled context).
type vuStop struct {
	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	running bool
}

// hardCtx is cancelled when the VU's iteration in flight is to be cut
// off: by its phase's abort, or by an interrupt of this VU alone.
func (vu *VU) hardCtx() context.Context {
	if vu.ph == nil {
		return context.Background()
	}
	s := &vu.stop
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(vu.ph.hard)
	}
	return s.ctx
}

// beginIteration readies the VU for an iteration and returns its hardCtx:
// after one that was cut off, it clears the interruption and remakes the
// request lanes on a fresh context; under noVUConnectionReuse it closes
// the lanes (their connections) the last iteration used. The common case,
// neither, takes the lock once.
func (vu *VU) beginIteration() context.Context {
	s := &vu.stop
	s.mu.Lock()
	stale := s.ctx != nil && s.ctx.Err() != nil && vu.ph.hard.Err() == nil
	if !stale && !(vu.r.opts.NoVUConnectionReuse && vu.iter > 0) {
		if s.ctx == nil {
			s.ctx, s.cancel = context.WithCancel(vu.ph.hard)
		}
		s.running = true
		ctx := s.ctx
		s.mu.Unlock()
		return ctx
	}
	s.mu.Unlock()
	vu.async.wait() // cut off with the iteration, or settled by it
	for _, l := range append(vu.slots, vu.async.all...) {
		l.runner.Close()
		l.driver.Close()
	}
	vu.slots, vu.async.all, vu.async.free = nil, nil, nil
	if stale {
		vu.rt.ClearInterrupt()
	}
	s.mu.Lock()
	if stale {
		s.cancel()
		s.ctx, s.cancel = context.WithCancel(vu.ph.hard)
	}
	s.running = true
	s.mu.Unlock()
	return vu.hardCtx()
}

// endIteration marks the VU's iteration done.
func (vu *VU) endIteration() {
	vu.stop.mu.Lock()
	vu.stop.running = false
	vu.stop.mu.Unlock()
}

// interrupt cuts off the VU's iteration in flight, if any: its requests,
// its sleep and its JavaScript. Safe from any goroutine.
func (vu *VU) interrupt() {
	s := &vu.stop
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running || s.ctx == nil {
		return
	}
	s.cancel()
	vu.rt.Interrupt(errRampedDown)
	vu.pause.Wake() // a sleep() under way ends (VU.sleep)
}

// releaseStop frees the VU's context when the VU closes.
func (vu *VU) releaseStop() {
	vu.stop.mu.Lock()
	if vu.stop.cancel != nil {
		vu.stop.cancel()
	}
	vu.stop.mu.Unlock()
}
