package phase

import (
	"context"
	"math"
	"sync"

	"github.com/throttlekit/throttle/governor"
)

// Follower is where a phase without a governor of its own takes its offer
// from (Config.Follow): a generator agent runs the normal phase — gate,
// schedule, workers, drain, the generator's watch — while a controller
// judges the windows of every agent at once and sends each its share.
//
// Follow runs on its own goroutine from the start of Run until ctx ends
// (when the phase stops scheduling): it calls apply with every new offer.
// apply sets the gate (in closed loop it also grows the worker pool) and
// returns the value actually applied (clamped to the gate's floor and
// ceiling, and to an authored schedule's ceiling in force).
type Follower interface {
	Follow(ctx context.Context, apply func(offer float64) (applied float64))
}

// FollowerFunc adapts a function to Follower.
type FollowerFunc func(ctx context.Context, apply func(offer float64) float64)

// Follow calls f.
func (f FollowerFunc) Follow(ctx context.Context, apply func(offer float64) float64) { f(ctx, apply) }

// follow starts the Follower; the returned stop ends it and waits for it.
func (p *Phase) follow(run context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(run)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.cfg.Follow.Follow(ctx, func(offer float64) float64 {
			applied := p.gate.Apply(offer)
			if p.cfg.Limits.Mode == governor.Concurrency {
				// No staggered start: the span is bounded by the deciding
				// governor's shortest window, and that governor is the
				// controller's, not here.
				p.spawnTo(run, int(math.Ceil(applied)), false)
			}
			return applied
		})
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}
