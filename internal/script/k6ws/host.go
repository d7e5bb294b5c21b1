// Package k6ws is k6's WebSocket modules: k6/ws, whose connect blocks the
// VU until its socket closes, and the browser-style WebSocket of
// k6/websockets (and its older name k6/experimental/websockets), driven by
// the VU's event loop. Built on gorilla/websocket, from k6's documentation
// and @types/k6.
//
// What the governor sees: a handshake is an attempt (ok, or failed with
// the class of its error or status: refused, reset, timeout, 5xx, 429);
// every message sent is an attempt (failed, class reset, when the write
// fails); a session the connection drops (no close frame) is a failed
// attempt of its error's class. Received messages are counted in
// ws_msgs_received, not as attempts.
package k6ws

import (
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// Host is what a VU gives the WebSocket modules. Every method is called on
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
	// Hold marks a socket as pending on the VU's event loop (which does
	// not end before Release), and gives the way to run a callback on the
	// VU's goroutine from any other. If the loop is reset (the iteration
	// threw or was aborted), later callbacks are dropped and stale runs
	// once instead.
	Hold(stale func()) Hold
	// Abort is closed when the VU's phase aborts it (nil: never).
	Abort() <-chan struct{}
}

// Hold is a socket's place on the VU's event loop.
type Hold interface {
	// Post queues fn to run on the VU's goroutine; safe from any goroutine.
	Post(fn func() error)
	// Release ends the hold: the loop may finish once its queue is done.
	Release()
}

// Metric is one of k6's WebSocket metrics.
type Metric struct {
	Name        string
	Trend, Time bool // a time Trend in milliseconds; else a Counter
}

// Metrics are k6's WebSocket metrics.
var Metrics = []Metric{
	{Name: "ws_connecting", Trend: true, Time: true},
	{Name: "ws_session_duration", Trend: true, Time: true},
	{Name: "ws_ping", Trend: true, Time: true},
	{Name: "ws_sessions"},
	{Name: "ws_msgs_sent"},
	{Name: "ws_msgs_received"},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// throw raises a JavaScript Error.
func throw(rt *sobek.Runtime, err error) {
	panic(rt.NewGoError(err))
}
