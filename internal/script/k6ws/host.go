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

	"github.com/throttlekit/throttle/internal/script/protohost"
)

// Host is what a VU gives the module (protohost.Host).
type Host = protohost.Host

// Hold is a socket's place on the VU's event loop (protohost.Hold).
type Hold = protohost.Hold

// Metrics are k6's WebSocket metrics.
var Metrics = []protohost.Metric{
	{Name: "ws_connecting", Trend: true, Time: true},
	{Name: "ws_session_duration", Trend: true, Time: true},
	{Name: "ws_ping", Trend: true, Time: true},
	{Name: "ws_sessions"},
	{Name: "ws_msgs_sent"},
	{Name: "ws_msgs_received"},
}

func ms(d time.Duration) float64 { return protohost.MS(d) }

func throw(rt *sobek.Runtime, err error) { protohost.Throw(rt, err) }
