package script

import (
	"errors"
	"fmt"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"
)

// ErrInterrupted is a load stopped by Config.Interrupt while the init
// context still ran.
var ErrInterrupted = errors.New("script: interrupted while running the init context")

// ErrInitMemory is an init context stopped because the process's heap
// passed Config.InitMemory while it ran.
var ErrInitMemory = errors.New("script: the init context allocated without bound")

// ErrInitTimeout is an init context stopped because it ran past
// Config.InitTimeout.
var ErrInitTimeout = errors.New("script: the init context did not end in time")

// DefaultInitTimeout is Config.InitTimeout's default. k6 documents no limit
// for the init context; 60 s is its documented setupTimeout default, the
// limit it puts on the lifecycle function nearest to init code: a script
// whose init context runs longer (a top-level loop that never ends, a
// huge file parsed) is stopped there, naming its line.
const DefaultInitTimeout = 60 * time.Second

// DefaultInitMemory is Config.InitMemory's default: the most heap the
// process may hold while the script's init context first runs.
const DefaultInitMemory = 2 << 30

// initWatch is how often the init context's memory is looked at.
const initWatch = 50 * time.Millisecond

// initInterruptible runs the VU's init context; closing interrupt stops
// it wherever it is (a loop that never ends included), and so do the heap
// passing limit bytes (0: no limit) and timeout passing (<= 0: none). The
// error names the script line it was stopped at.
func (vu *VU) initInterruptible(interrupt <-chan struct{}, limit int64, timeout time.Duration) error {
	if interrupt == nil && limit <= 0 && timeout <= 0 {
		return vu.init()
	}
	done := make(chan struct{})
	defer close(done)
	stopped := make(chan error, 1)
	// ended is set once the init context returned: an interrupt that comes
	// after (interrupt closing just then, the watcher not yet told by done)
	// must not reach the runtime, or the VU's first iteration would be
	// interrupted before it began. Under mu, with the interrupt itself.
	var mu sync.Mutex
	ended := false
	go func() {
		var tick, expired <-chan time.Time
		if limit > 0 {
			t := time.NewTicker(initWatch)
			defer t.Stop()
			tick = t.C
		}
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		stop := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				return
			}
			stopped <- err
			vu.rt.Interrupt(err)
		}
		sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-interrupt:
				stop(ErrInterrupted)
				return
			case <-expired:
				stop(fmt.Errorf("%w: it ran past its %v init timeout", ErrInitTimeout, timeout))
				return
			case <-tick:
				rtmetrics.Read(sample)
				if sample[0].Value.Kind() == rtmetrics.KindUint64 && sample[0].Value.Uint64() > uint64(limit) {
					stop(fmt.Errorf("%w: its heap passed %d MiB", ErrInitMemory, limit>>20))
					return
				}
			case <-done:
				return
			}
		}
	}()
	err := vu.init()
	mu.Lock()
	ended = true
	mu.Unlock()
	if err == nil {
		select {
		case why := <-stopped:
			// Interrupted as its last statement ended: the runtime keeps
			// the interrupt for its next call, so clear it; the VU was
			// stopped all the same.
			vu.rt.ClearInterrupt()
			return why
		default:
			return nil
		}
	}
	var why error
	select {
	case why = <-stopped:
	default:
		return err
	}
	// The event loop may hand the interruption back as text: then there is
	// no position to name.
	if where := stuckAt(err); where != "" {
		return fmt.Errorf("%w, at %s", why, where)
	}
	if errors.As(err, new(*sobek.InterruptedError)) || strings.Contains(err.Error(), why.Error()) {
		return why
	}
	return err
}

// initVU runs the init context of a scenario's VU (p nil: the setup VU's)
// under the run's init timeout; the scenario's abort (a second Ctrl-C, the
// graceful stop run out) stops it too, as errAborted: a VU whose init
// code loops only for some __VU is stopped as the first one would be.
func (vu *VU) initVU(p *Phase) error {
	var abort <-chan struct{}
	if p != nil {
		abort = p.hard.Done()
	}
	err := vu.initInterruptible(abort, 0, vu.r.cfg.InitTimeout)
	if errors.Is(err, ErrInterrupted) {
		return errAborted
	}
	return err
}
