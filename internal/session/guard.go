package session

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/script"
)

// guarded is a k6 output whose panics are recovered: the point it was
// writing is lost, the first panic is logged (warn) and every one counted,
// and the run goes on.
type guarded struct {
	w      pointWriter
	warn   func(string)
	panics atomic.Int64
}

func (g *guarded) Point(m *script.Metric, v float64, tags map[string]string) {
	defer func() {
		if x := recover(); x != nil {
			if g.panics.Add(1) == 1 {
				g.warn(fmt.Sprintf("internal error: a Go panic in the %T output (%v), recovered: the point is lost, the run goes on (further panics are counted)", g.w, x))
			}
		}
	}()
	g.w.Point(m, v, tags)
}

// Close closes the output; a panic in it is an error, as is any point a
// panic lost.
func (g *guarded) Close() error {
	if err := safely(g.w.Close); err != nil {
		return err
	}
	if n := g.panics.Load(); n > 0 {
		return fmt.Errorf("%d point(s) lost to a Go panic in the output", n)
	}
	return nil
}

// unguarded is the output g guards (itself if unguarded).
func unguarded(w pointWriter) pointWriter {
	if g, ok := w.(*guarded); ok {
		return g.w
	}
	return w
}

// safely runs write, turning a Go panic in it into its error: a report
// writer's bug loses that file, not the others or the summary.
func safely(write func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("internal error: a Go panic while writing (%v)", x)
		}
	}()
	return write()
}

// watchScriptSignals is a script run's Ctrl-C and SIGTERM: the first stops
// the scenarios gracefully (and cuts short setup, teardown or
// handleSummary if one runs), the second aborts the iterations in flight
// (and cuts short the lifecycle function running then), every later one
// cuts short the lifecycle function running then (teardown, then
// handleSummary), so that no signal goes unanswered.
func watchScriptSignals(sig <-chan os.Signal, done <-chan struct{}, cancel context.CancelFunc, r *script.Runner, con *live.Console) {
	if sig == nil {
		return
	}
	live.WatchSignals(sig, done, func() { cancel(); r.Interrupt() }, func() { r.Abort(); r.Interrupt() },
		func() int64 { return inFlight(r) }, con, 0)
	for {
		select {
		case <-sig:
			r.Interrupt()
		case <-done:
			return
		}
	}
}

// stoppedLine says which lifecycle function a signal cut short, and what
// the run did instead.
func stoppedLine(stage string) string {
	switch stage {
	case "setup":
		return "setup() interrupted by a signal: no scenario and no teardown ran; the summary has what setup gathered"
	case "teardown":
		return "teardown() interrupted by a signal: the summary has what the run gathered"
	}
	return "handleSummary() interrupted by a signal: k6's default summary is written instead"
}

// interruptedErr is an interrupted script run's exit message (k6's 105).
func interruptedErr(stage string, aborted uint64) error {
	msg := "run interrupted by a signal"
	if stage != "" {
		msg += " during " + stage + "()"
	}
	if aborted > 0 {
		msg += fmt.Sprintf(", %d attempt(s) aborted in flight", aborted)
	}
	return fmt.Errorf("%s (exit code %d, k6's for an externally aborted run)", msg, ExitExternalAbort)
}

// aborted counts the attempts the run's scenarios aborted.
func aborted(r *script.Runner) uint64 {
	var n uint64
	for _, ph := range r.Phases() {
		n += ph.Counts().Aborted
	}
	return n
}
