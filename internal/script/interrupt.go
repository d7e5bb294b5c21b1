package script

import (
	"errors"
	"fmt"
	rtmetrics "runtime/metrics"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// ErrInterrupted is a load stopped by Config.Interrupt while the init
// context still ran.
var ErrInterrupted = errors.New("script: interrupted while running the init context")

// ErrInitMemory is an init context stopped because the process's heap
// passed Config.InitMemory while it ran.
var ErrInitMemory = errors.New("script: the init context allocated without bound")

// DefaultInitMemory is Config.InitMemory's default: the most heap the
// process may hold while the script's init context first runs.
const DefaultInitMemory = 2 << 30

// initWatch is how often the init context's memory is looked at.
const initWatch = 50 * time.Millisecond

// initInterruptible runs the VU's init context; closing interrupt stops
// it wherever it is (a loop that never ends included), and so does the
// heap passing limit bytes (0: no limit). The error names the script line
// it was stopped at.
func (vu *VU) initInterruptible(interrupt <-chan struct{}, limit int64) error {
	if interrupt == nil && limit <= 0 {
		return vu.init()
	}
	done := make(chan struct{})
	defer close(done)
	stopped := make(chan error, 1)
	go func() {
		var tick <-chan time.Time
		if limit > 0 {
			t := time.NewTicker(initWatch)
			defer t.Stop()
			tick = t.C
		}
		sample := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-interrupt:
				stopped <- ErrInterrupted
				vu.rt.Interrupt(ErrInterrupted)
				return
			case <-tick:
				rtmetrics.Read(sample)
				if sample[0].Value.Kind() == rtmetrics.KindUint64 && sample[0].Value.Uint64() > uint64(limit) {
					err := fmt.Errorf("%w: its heap passed %d MiB", ErrInitMemory, limit>>20)
					stopped <- err
					vu.rt.Interrupt(err)
					return
				}
			case <-done:
				return
			}
		}
	}()
	err := vu.init()
	if err == nil {
		return nil
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
