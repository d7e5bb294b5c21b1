package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/engine"
)

// shipper sends an agent's deltas: each is what its counters gained since
// the one before.
type shipper struct {
	id       string
	nc       *nats.Conn
	seq      uint64
	prev     engine.Counts
	prevLoad governor.Load
}

// delta is the next delta: the counters' gain, numbered, with the
// connection's client id.
func (s *shipper) delta(c engine.Counts, l governor.Load, final bool, errText string) Delta {
	d := deltaOf(c, s.prev, l, s.prevLoad)
	s.prev, s.prevLoad = c, l
	s.seq++
	d.Agent, d.Seq, d.Final, d.Err = s.id, s.seq, final, errText
	d.CID, _ = s.nc.GetClientID()
	return d
}

// ship runs a phase (run, until it returns) and calls send every tick
// and once more, final, when it ends. It cancels the phase when the
// controller stops the run, falls silent for silent (no offer heard) or
// the connection closes, and returns why the phase ended and its error;
// the last delta is flushed.
func ship(ctx context.Context, run func(context.Context) error, send func(final bool, errText string), every, silent time.Duration,
	heard <-chan struct{}, stop, closed <-chan struct{}, flush func()) (why string, err error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(runCtx) }()
	t := time.NewTicker(every)
	defer t.Stop()
	lastHeard := time.Now()
	silenced := false
	for {
		select {
		case err := <-done:
			errText := ""
			switch {
			case err != nil:
				errText = err.Error()
			case silenced:
				// The controller may still be there, stalled: its report
				// must not take the cut-short part for a whole one.
				errText = "its run was cut short: " + why
			}
			send(true, errText)
			flush()
			return why, err
		case <-heard:
			lastHeard = time.Now()
		case <-t.C:
			send(false, "")
			select {
			case <-heard: // heard while sending (a send can take a while on a loaded machine)
				lastHeard = time.Now()
			default:
			}
			if why == "" && time.Since(lastHeard) > silent {
				why = fmt.Sprintf("the controller was silent for %v", silent)
				silenced = true
				cancel()
			}
		case <-stop:
			if why == "" {
				why = "the controller stopped the run"
			}
			stop = nil
			cancel()
		case <-closed:
			if why == "" {
				why = "the connection to the controller closed"
			}
			closed = nil
			cancel()
		}
	}
}

// stopped logs and returns an agent's summary.
func stopped(log *slog.Logger, id, why, ended string, attempts uint64) *Summary {
	if why == "" {
		why = ended
	}
	log.Info("throttle agent stopped", "as", id, "why", why, "attempts", attempts)
	return &Summary{ID: id, Stopped: why, Attempts: attempts}
}
