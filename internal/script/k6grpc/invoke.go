package k6grpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/throttlekit/throttle/internal/script/protohost"
)

// unaryCall is one call made ready on the VU's goroutine; do may run on
// another.
type unaryCall struct {
	conn     *grpc.ClientConn
	name     string // package.Service/Method
	req, res proto.Message
	md       metadata.MD
	timeout  time.Duration
	discard  bool
	tags     map[string]string
	// What came back.
	header, trailer metadata.MD
	took            time.Duration
}

// callParams are a call's or a stream's params.
type callParams struct {
	md         metadata.MD
	tags       sobek.Value
	timeout    time.Duration
	timeoutSet bool
	discard    bool
}

// params reads {metadata, tags, timeout, discardResponseMessage}.
func (c *client) params(fn string, v sobek.Value) callParams {
	rt := c.rt
	p := callParams{md: metadata.MD{}, timeout: callTimeout}
	o, ok := v.(*sobek.Object)
	if !ok {
		return p
	}
	for _, k := range o.Keys() {
		v := o.Get(k)
		switch k {
		case "metadata":
			if m, ok := v.(*sobek.Object); ok {
				for _, mk := range m.Keys() {
					p.md.Append(mk, m.Get(mk).String())
				}
			}
		case "tags":
			p.tags = v
		case "timeout":
			d, err := duration(v)
			if err != nil || d <= 0 {
				throwf(rt, "%s: timeout: want a duration > 0 such as \"5s\", got %v", fn, v)
			}
			p.timeout, p.timeoutSet = d, true
		case "discardResponseMessage":
			p.discard = v.ToBoolean()
		default:
			throwf(rt, "%s: unknown param %q (want metadata, tags, timeout, discardResponseMessage)", fn, k)
		}
	}
	return p
}

// tags are a call's tags: the VU's, the params', url, method, name and
// rpc_type.
func (c *client) tags(name string, extra sobek.Value, rpcType string) map[string]string {
	t := c.h.Tags(extra)
	t["url"] = c.addr + "/" + name
	t["method"] = name
	t["rpc_type"] = rpcType
	if _, ok := t["name"]; !ok {
		t["name"] = t["url"]
	}
	return t
}

// decode fills msg from a script's object, as protojson reads JSON.
func (c *client) decode(v sobek.Value, msg *dynamicpb.Message) error {
	b, err := json.Marshal(v.Export())
	if err != nil {
		return err
	}
	return protojson.Unmarshal(b, msg)
}

// encode is msg as the script's object, every field present.
func (c *client) encode(msg proto.Message) (sobek.Value, error) {
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(msg)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return c.rt.ToValue(v), nil
}

// errorObject is a status as k6's GrpcError: code, message, details.
func (c *client) errorObject(st *status.Status) *sobek.Object {
	o := c.rt.NewObject()
	_ = o.Set("code", int(st.Code()))
	_ = o.Set("message", st.Message())
	details := []any{}
	for _, d := range st.Details() {
		details = append(details, fmt.Sprint(d))
	}
	_ = o.Set("details", details)
	return o
}

// metadataCtx is ctx carrying the params' metadata.
func metadataCtx(ctx context.Context, p callParams) context.Context {
	return metadata.NewOutgoingContext(ctx, p.md)
}

// withTimeout bounds ctx by d; the cancel it returns also calls cancel.
func withTimeout(ctx context.Context, cancel context.CancelFunc, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancelT := context.WithTimeout(ctx, d)
	return ctx, func() { cancelT(); cancel() }
}

// prepare reads invoke's arguments: the method, the request object and
// the params.
func (c *client) prepare(fn, method string, req, params sobek.Value) *unaryCall {
	rt := c.rt
	if c.conn == nil {
		throwf(rt, "client.%s: no gRPC connection, call connect first", fn)
	}
	name := strings.TrimPrefix(method, "/")
	md, ok := c.methods[name]
	if !ok {
		throwf(rt, "client.%s: method %q not found in the loaded descriptors (load its .proto, a protoset, or connect with reflect: true)", fn, method)
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		throwf(rt, "client.%s: %s is a streaming method; use grpc.Stream", fn, name)
	}
	p := c.params("client."+fn, params)
	call := &unaryCall{conn: c.conn, name: name, md: p.md, timeout: p.timeout, discard: p.discard,
		req: dynamicpb.NewMessage(md.Input()), res: dynamicpb.NewMessage(md.Output())}
	if err := c.decode(req, call.req.(*dynamicpb.Message)); err != nil {
		throwf(rt, "client.%s: the request is not a %s: %v", fn, md.Input().FullName(), err)
	}
	call.tags = c.tags(name, p.tags, "unary")
	return call
}

// do makes the call; safe on any goroutine.
func (call *unaryCall) do(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, call.md), call.timeout)
	defer cancel()
	began := time.Now()
	err := call.conn.Invoke(ctx, "/"+call.name, call.req, call.res, grpc.Header(&call.header), grpc.Trailer(&call.trailer))
	call.took = time.Since(began)
	return err
}

// response counts a finished call (grpc_req_duration, the attempt) and
// makes the script's Response: status, message, headers, trailers, error.
func (c *client) response(call *unaryCall, err error) sobek.Value {
	rt := c.rt
	st := status.Convert(err)
	call.tags["status"] = strconv.Itoa(int(st.Code()))
	c.h.Sample("grpc_req_duration", ms(call.took), call.tags)
	c.h.Attempt(classOf(st.Code()), call.took, true)
	o := rt.NewObject()
	_ = o.Set("status", int(st.Code()))
	_ = o.Set("headers", mdObject(rt, call.header))
	_ = o.Set("trailers", mdObject(rt, call.trailer))
	msg := sobek.Null()
	if err == nil && !call.discard {
		v, err := c.encode(call.res)
		if err != nil {
			throwf(rt, "the response: %v", err)
		}
		msg = v
	}
	_ = o.Set("message", msg)
	e := sobek.Null()
	if err != nil {
		e = c.errorObject(st)
	}
	_ = o.Set("error", e)
	return o
}

// mdObject is metadata as k6 shows it: each key's values in an array.
func mdObject(rt *sobek.Runtime, md metadata.MD) *sobek.Object {
	o := rt.NewObject()
	for k, vs := range md {
		_ = o.Set(k, append([]string(nil), vs...))
	}
	return o
}

// asyncInvoke is client.asyncInvoke: the call goes out on its own
// goroutine and the promise settles on the VU's event loop.
func (c *client) asyncInvoke(method string, req, params sobek.Value) sobek.Value {
	rt := c.rt
	call := c.prepare("asyncInvoke", method, req, params)
	p, resolve, _ := rt.NewPromise()
	hold := c.h.Hold(func() {})
	ctx, cancel := c.abortCtx()
	go func() {
		defer cancel()
		err := c.doRecovered(ctx, call)
		hold.Post(func() error { return resolve(c.response(call, err)) })
		hold.Release()
	}()
	return rt.ToValue(p)
}

// doRecovered is call.do on asyncInvoke's goroutine: a Go panic there
// (throttle's bug) is recovered as the call's error (status Unknown,
// class other).
func (c *client) doRecovered(ctx context.Context, call *unaryCall) (err error) {
	defer c.h.Panics().Recover("a gRPC asyncInvoke", &err)
	protohost.Checkpoint("grpc.async")
	return call.do(ctx)
}

// healthCheck is client.healthCheck([service]): the standard health
// service's answer, {Status}; a service the server does not know is
// SERVICE_UNKNOWN.
func (c *client) healthCheck(service sobek.Value) sobek.Value {
	rt := c.rt
	if c.conn == nil {
		throw(rt, errors.New("client.healthCheck: no gRPC connection, call connect first"))
	}
	name := ""
	if service != nil && !sobek.IsUndefined(service) {
		name = service.String()
	}
	ctx, cancel := c.abortCtx()
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, callTimeout)
	defer cancelT()
	began := time.Now()
	res, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: name})
	took := time.Since(began)
	code := status.Code(err)
	o := rt.NewObject()
	switch {
	case err == nil:
		_ = o.Set("Status", res.GetStatus().String())
	case code == codes.NotFound:
		code = codes.OK // the server answered: it does not know the service
		_ = o.Set("Status", "SERVICE_UNKNOWN")
	}
	tags := c.tags("grpc.health.v1.Health/Check", nil, "unary")
	tags["status"] = strconv.Itoa(int(code))
	c.h.Sample("grpc_req_duration", ms(took), tags)
	c.h.Attempt(classOf(code), took, true)
	if code != codes.OK {
		throwf(rt, "client.healthCheck: %v", err)
	}
	return o
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
