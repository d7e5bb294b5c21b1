// Package k6grpc is k6's k6/net/grpc module: a Client that loads .proto
// files (compiled at init by bufbuild/protocompile, no protoc), a
// protoset, or the server's reflection, connects, and makes unary calls
// with invoke and asyncInvoke over google.golang.org/grpc with dynamic
// messages. From k6's documentation and @types/k6.
//
// What the governor sees: every call (invoke, asyncInvoke, healthCheck)
// and every connect is an attempt; a call whose status is not OK fails,
// classed timeout for DEADLINE_EXCEEDED, 5xx for RESOURCE_EXHAUSTED and
// UNAVAILABLE (a server shedding load, as a 503 is), other for the rest;
// a connect that fails is refused (or timeout). A grpc.Stream is one
// attempt when it ends, by its status; its messages are counted in
// grpc_streams_msgs_sent and _received.
package k6grpc

import (
	"fmt"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc/codes"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/options"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// Host is what a VU gives the module.
type Host = protohost.Host

// Metrics are k6's gRPC metrics.
var Metrics = []protohost.Metric{{Name: "grpc_req_duration", Trend: true, Time: true},
	{Name: "grpc_streams"}, {Name: "grpc_streams_msgs_sent"}, {Name: "grpc_streams_msgs_received"}}

// Defaults k6 documents: a connect's timeout and a call's.
const (
	connectTimeout = 60 * time.Second
	callTimeout    = 2 * time.Minute
)

// statusNames are k6's names of the status codes.
var statusNames = []string{"StatusOK", "StatusCanceled", "StatusUnknown", "StatusInvalidArgument", "StatusDeadlineExceeded",
	"StatusNotFound", "StatusAlreadyExists", "StatusPermissionDenied", "StatusResourceExhausted", "StatusFailedPrecondition",
	"StatusAborted", "StatusOutOfRange", "StatusUnimplemented", "StatusInternal", "StatusUnavailable", "StatusDataLoss",
	"StatusUnauthenticated"}

// New is k6/net/grpc in one VU: Client, Stream, the status and health
// constants.
func New(h Host) *sobek.Object {
	rt := h.Runtime()
	o := rt.NewObject()
	_ = o.Set("Client", func(call sobek.ConstructorCall) *sobek.Object {
		newClient(h, call.This)
		return nil
	})
	_ = o.Set("Stream", func(call sobek.ConstructorCall) *sobek.Object {
		newStream(h, call)
		return nil
	})
	for code, name := range statusNames {
		_ = o.Set(name, code)
	}
	for k, v := range map[string]string{"HealthCheckServing": "SERVING", "HealthCheckNotServing": "NOT_SERVING",
		"HealthCheckUnknown": "UNKNOWN", "HealthCheckServiceUnkown": "SERVICE_UNKNOWN"} {
		_ = o.Set(k, v)
	}
	return o
}

// classOf is the attempt class of a call's status.
func classOf(c codes.Code) engine.Class {
	switch c {
	case codes.OK:
		return engine.ClassOK
	case codes.DeadlineExceeded:
		return engine.ClassTimeout
	case codes.ResourceExhausted, codes.Unavailable:
		return engine.Class5xx
	}
	return engine.ClassOther
}

func throw(rt *sobek.Runtime, err error) { protohost.Throw(rt, err) }

func throwf(rt *sobek.Runtime, format string, args ...any) { throw(rt, fmt.Errorf(format, args...)) }

// duration reads a k6 duration: a string such as "5s", or milliseconds.
func duration(v sobek.Value) (time.Duration, error) {
	if s, ok := v.Export().(string); ok {
		return options.ParseDuration(s)
	}
	f := v.ToFloat()
	if f != f || f < 0 {
		return 0, fmt.Errorf("want a duration such as \"5s\" or milliseconds, got %v", v)
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}
