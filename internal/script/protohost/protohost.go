// Package protohost is what the protocol modules (k6ws, k6grpc) need
// of a VU, so that they do not depend on the script runtime: its
// JavaScript runtime, tags and metrics, the phase's meter, its event loop.
package protohost

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// Host is what a VU gives the protocol modules (k6ws, k6grpc). Every method is called on
// the VU's goroutine.
type Host interface {
	Runtime() *sobek.Runtime
	// InInit reports whether the init context is running.
	InInit() bool
	// Bytes reads a string, ArrayBuffer or typed array argument.
	Bytes(v sobek.Value) []byte
	// Tags are the VU's tags (scenario, group, the scenario's own) with
	// the script's tags object over them.
	Tags(extra sobek.Value) map[string]string
	// Sample adds v to one of Metrics with tags.
	Sample(metric string, v float64, tags map[string]string)
	// Attempt counts one attempt on the phase's meter; a failed one (not
	// ClassOK) fails the iteration. latency also records elapsed as an
	// attempt's latency (handshakes, not messages).
	Attempt(c engine.Class, elapsed time.Duration, latency bool)
	// Hold marks something long-lived (a socket, a call) as pending on the VU's event loop (which does
	// not end before Release), and gives the way to run a callback on the
	// VU's goroutine from any other. If the loop is reset (the iteration
	// threw or was aborted), later callbacks are dropped and stale runs
	// once instead.
	Hold(stale func()) Hold
	// ReadFile reads a file as open() does: a relative path from the
	// script's folder.
	ReadFile(path string) ([]byte, error)
	// Context is done when the VU's phase aborts it (never for the
	// setup VU): what cuts off a handshake, a connection, a call.
	Context() context.Context
	// Panics is the run's panic recovery: a goroutine a module starts
	// defers Panics().Recover(...) so that a Go panic in it (throttle's
	// bug) fails that stream, is logged once and counted, and the run
	// goes on. Safe from any goroutine.
	Panics() *engine.Panics
}

// testPanic, set by tests only (SetTestPanic), runs at each goroutine's
// Checkpoint with the site's name; a test panics there as a bug would.
var testPanic atomic.Pointer[func(site string)]

// SetTestPanic sets the function Checkpoint calls (nil: none). For tests.
func SetTestPanic(f func(site string)) {
	if f == nil {
		testPanic.Store(nil)
		return
	}
	testPanic.Store(&f)
}

// Checkpoint is where a test may inject a panic into a module's goroutine
// (SetTestPanic); otherwise it does nothing.
func Checkpoint(site string) {
	if f := testPanic.Load(); f != nil {
		(*f)(site)
	}
}

// Hold is a pending thing's place on the VU's event loop.
type Hold interface {
	// Post queues fn to run on the VU's goroutine; safe from any goroutine.
	Post(fn func() error)
	// Release ends the hold: the loop may finish once its queue is done.
	Release()
}

// Metric is one of the protocols' k6 metrics.
type Metric struct {
	Name        string
	Trend, Time bool // a time Trend in milliseconds; else a Counter
}

// MS is d in milliseconds, as k6's time metrics are.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Throw raises a JavaScript Error.
func Throw(rt *sobek.Runtime, err error) {
	panic(rt.NewGoError(err))
}
