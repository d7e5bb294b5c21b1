package throttlevegeta

import (
	"fmt"
	"math"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// MinRate is the lowest rate a Pacer accepts as its floor, in hits per
// second: it bounds the longest wait Pace can return to 1/MinRate (1000 s).
const MinRate = 0.001

// DefaultBurst is how far a Pacer's schedule may lag the attack before the
// missed hits are dropped instead of sent at once. vegeta paces from one
// goroutine that sleeps between hits; on a busy machine it wakes a few
// milliseconds late, and hits due within this window are still sent (at once)
// so the achieved rate stays at the offer.
const DefaultBurst = 10 * time.Millisecond

// PacerOption configures a Pacer.
type PacerOption func(*Pacer)

// WithBurst sets how far the schedule may lag the attack (default
// DefaultBurst): at most 1 + ⌊rate × d⌋ hits are ever due at once. With 0 the
// pacer never sends two hits closer than one interval.
func WithBurst(d time.Duration) PacerOption { return func(p *Pacer) { p.burst = d } }

// Pacer is a vegeta.Pacer whose rate is set from outside while the attack
// runs: by the governor through its control path (Pacer implements
// governor.Applier), or by anyone calling Apply.
//
// Its rate is always within [floor, ceiling]; the ceiling is the authored
// rate. At a fixed rate r it paces like vegeta's ConstantPacer: counted from
// the anchor, the n-th hit is due n/r after it, and the first anchor is the
// start of the attack.
//
// A rate change takes effect at the next Pace call and re-anchors the
// schedule there: the new anchor is the moment the last hit was due under the
// old rate, and the next hit is due one interval at the new rate after it.
// Hits already sent at the old rate are never owed at the new one (no burst
// when the rate rises), and the next hit never waits more than one interval
// at the new rate after the previous one was due (no stall when it falls).
// vegeta sleeps the wait Pace returned before it asks again, so a change made
// during that sleep is seen after it: at most one interval at the old rate.
//
// When the attack falls behind (vegeta's workers were all busy, or its
// goroutine woke late) by more than the burst window, the schedule restarts
// one burst window in the past: the missed hits are dropped, not sent in a
// burst. Pace never returns a negative wait; called as vegeta calls it (each
// hit sent no earlier than the wait before it said), it never returns one
// longer than one interval at the rate in force, and whatever it is told it
// never returns one longer than 1/MinRate. It never asks to stop: the
// attack's duration or Attacker.Stop ends the attack.
//
// A Pacer paces one attack at a time: when a new attack starts (hits counted
// from 0 again) its schedule starts afresh at the rate in force. It is safe
// for concurrent use. Build it with NewPacer; the zero value is not usable.
type Pacer struct {
	floor, ceiling float64
	burst          time.Duration

	mu   sync.Mutex
	rate float64 // in force; in [floor, ceiling]
	// The schedule: the hit numbered anchorHits+n-1 (hits counted from 0) is
	// due at anchorAt + n/rate, for n >= 1.
	anchorAt   float64 // nanoseconds of elapsed attack time
	anchorHits uint64
	paceRate   float64 // the rate the schedule was anchored with
}

var _ vegeta.Pacer = (*Pacer)(nil)

// NewPacer returns a pacer starting at rate start, which Apply keeps within
// [floor, ceiling]. It requires MinRate <= floor <= start <= ceiling, all
// finite, and a burst >= 0.
func NewPacer(floor, start, ceiling float64, opts ...PacerOption) (*Pacer, error) {
	p := &Pacer{floor: floor, ceiling: ceiling, burst: DefaultBurst}
	for _, o := range opts {
		o(p)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"floor", floor}, {"start", start}, {"ceiling", ceiling}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return nil, fmt.Errorf("throttlevegeta: %s must be a finite rate, got %v", f.name, f.v)
		}
	}
	switch {
	case floor < MinRate:
		return nil, fmt.Errorf("throttlevegeta: floor must be >= %v hits/s, got %v", MinRate, floor)
	case start < floor:
		return nil, fmt.Errorf("throttlevegeta: start (%v) must be >= floor (%v)", start, floor)
	case start > ceiling:
		return nil, fmt.Errorf("throttlevegeta: start (%v) must be <= ceiling (%v)", start, ceiling)
	case p.burst < 0:
		return nil, fmt.Errorf("throttlevegeta: burst must be >= 0, got %v", p.burst)
	}
	p.rate, p.paceRate = start, start
	return p, nil
}

// Apply sets the rate to offer clamped to [floor, ceiling] and returns the
// rate applied; a NaN offer keeps the current rate. It is the governor's
// Applier: governor.NewControl(pacer) drives it.
func (p *Pacer) Apply(offer float64) (applied float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !math.IsNaN(offer) {
		p.rate = min(max(offer, p.floor), p.ceiling)
	}
	return p.rate
}

// Rate returns the rate in force, in hits per second. It is instantaneous:
// elapsed is ignored, since the rate follows the governor and not a curve.
func (p *Pacer) Rate(time.Duration) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

// Ceiling returns the authored rate, the highest the pacer goes.
func (p *Pacer) Ceiling() float64 { return p.ceiling }

// Pace returns how long the attack should wait before the next hit, given the
// attack's elapsed time and the hits sent so far. It never stops the attack.
func (p *Pacer) Pace(elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := float64(elapsed)
	if hits < p.anchorHits {
		// vegeta counts hits from 0 up, so this means the pacer was reused for
		// a new attack: start its schedule afresh.
		p.anchorAt, p.anchorHits, p.paceRate = 0, 0, p.rate
	}
	if p.rate != p.paceRate {
		// Re-anchor where the last hit was due at the old rate, so the hits
		// already sent are neither owed nor repeated at the new one.
		p.anchorAt += float64(hits-p.anchorHits) * 1e9 / p.paceRate
		p.anchorHits, p.paceRate = hits, p.rate
	}
	interval := 1e9 / p.paceRate
	due := p.anchorAt + float64(hits-p.anchorHits+1)*interval
	if lag := now - float64(p.burst); due < lag {
		// Further behind than the burst window: drop the missed hits by
		// restarting the schedule so that this hit is due one window ago.
		p.anchorAt, p.anchorHits = lag-interval, hits
		due = lag
	}
	if due <= now {
		return 0, false
	}
	// A caller that claims more hits than were due could ask for a wait past
	// any sensible bound (or past a Duration): cap it.
	return time.Duration(math.Ceil(min(due-now, 1e9/MinRate))), false
}
