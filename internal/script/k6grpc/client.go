package k6grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/throttlekit/throttle/internal/engine"
)

// client is one grpc.Client: the methods its loaded files describe and
// its connection.
type client struct {
	h       Host
	rt      *sobek.Runtime
	obj     *sobek.Object
	methods map[string]protoreflect.MethodDescriptor // by "package.Service/Method"
	conn    *grpc.ClientConn
	addr    string
	// unwatch stops the watch that closes conn when the VU's phase ends:
	// a script need not call close (k6 closes its clients when the test
	// ends), and a connection left open would outlive the run.
	unwatch func() bool
}

// clientKey holds a Client object's Go client, under a symbol scripts
// cannot name.
var clientKey = sobek.NewSymbol("grpc.Client")

// clientOf is v's client, or nil.
func clientOf(v sobek.Value) *client {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil
	}
	if x := o.GetSymbol(clientKey); x != nil {
		c, _ := x.Export().(*client)
		return c
	}
	return nil
}

// newClient is `new grpc.Client()`.
func newClient(h Host, this *sobek.Object) {
	c := &client{h: h, rt: h.Runtime(), obj: this, methods: map[string]protoreflect.MethodDescriptor{}}
	// new grpc.Stream(client, ...) finds the client through this.
	_ = this.SetSymbol(clientKey, h.Runtime().ToValue(c))
	set := func(k string, f any) { _ = this.Set(k, f) }
	set("load", c.load)
	set("loadProtoset", c.loadProtoset)
	set("connect", c.connect)
	set("invoke", func(method string, req sobek.Value, params sobek.Value) sobek.Value {
		call := c.prepare("invoke", method, req, params)
		ctx, cancel := c.abortCtx()
		defer cancel()
		return c.response(call, call.do(ctx))
	})
	set("asyncInvoke", c.asyncInvoke)
	set("healthCheck", c.healthCheck)
	set("close", c.closeConn)
}

// closeConn closes the connection, if any (close, or connect again).
func (c *client) closeConn() {
	if c.conn == nil {
		return
	}
	c.unwatch()
	_ = c.conn.Close()
	c.conn, c.unwatch = nil, nil
}

// add indexes the methods of files' services.
func (c *client) add(files []protoreflect.FileDescriptor) {
	for _, f := range files {
		svcs := f.Services()
		for i := range svcs.Len() {
			s := svcs.Get(i)
			ms := s.Methods()
			for j := range ms.Len() {
				m := ms.Get(j)
				c.methods[string(s.FullName())+"/"+string(m.Name())] = m
			}
		}
	}
}

// load is client.load(importPaths, ...protoFiles), in the init context.
func (c *client) load(call sobek.FunctionCall) sobek.Value {
	if !c.h.InInit() {
		throw(c.rt, errors.New("client.load: load .proto files in the init context"))
	}
	var paths []string
	if o, ok := call.Argument(0).(*sobek.Object); ok {
		_ = c.rt.ExportTo(o, &paths)
	}
	var files []string
	for _, a := range call.Arguments[min(1, len(call.Arguments)):] {
		files = append(files, a.String())
	}
	if len(files) == 0 {
		throw(c.rt, errors.New("client.load(importPaths, ...protoFiles): no .proto file given"))
	}
	fds, err := compile(c.h, paths, files)
	if err != nil {
		throwf(c.rt, "client.load: %v", err)
	}
	c.add(fds)
	return sobek.Undefined()
}

// loadProtoset is client.loadProtoset(path), in the init context.
func (c *client) loadProtoset(path string) {
	if !c.h.InInit() {
		throw(c.rt, errors.New("client.loadProtoset: load a protoset in the init context"))
	}
	b, err := c.h.ReadFile(path)
	if err != nil {
		throwf(c.rt, "client.loadProtoset: %v", err)
	}
	fds, err := protoset(b)
	if err != nil {
		throwf(c.rt, "client.loadProtoset(%q): %v", path, err)
	}
	c.add(fds)
}

// connect is client.connect(address, {plaintext, reflect, timeout,
// maxReceiveSize, maxSendSize}): it returns once the connection is ready,
// an attempt counted like a call.
func (c *client) connect(addr string, params sobek.Value) {
	if c.h.InInit() {
		throw(c.rt, errors.New("client.connect: connect in the VU context (the default function or setup), not the init context"))
	}
	plaintext, reflectIt, timeout := false, false, connectTimeout
	opts := []grpc.DialOption{}
	var callOpts []grpc.CallOption
	if o, ok := params.(*sobek.Object); ok {
		for _, k := range o.Keys() {
			v := o.Get(k)
			switch k {
			case "plaintext":
				plaintext = v.ToBoolean()
			case "reflect":
				reflectIt = v.ToBoolean()
			case "timeout":
				d, err := duration(v)
				if err != nil || d <= 0 {
					throwf(c.rt, "client.connect: timeout: want a duration > 0 such as \"5s\", got %v", v)
				}
				timeout = d
			case "maxReceiveSize":
				callOpts = append(callOpts, grpc.MaxCallRecvMsgSize(int(v.ToInteger())))
			case "maxSendSize":
				callOpts = append(callOpts, grpc.MaxCallSendMsgSize(int(v.ToInteger())))
			case "tls", "reflectMetadata":
				throwf(c.rt, "k6/net/grpc: connect's %s param is not supported by throttle", k)
			default:
				throwf(c.rt, "client.connect: unknown param %q (want plaintext, reflect, timeout, maxReceiveSize, maxSendSize)", k)
			}
		}
	}
	if plaintext {
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})))
	}
	if len(callOpts) > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(callOpts...))
	}
	c.closeConn()
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		throwf(c.rt, "client.connect(%q): %v", addr, err)
	}
	actx, acancel := c.abortCtx()
	defer acancel()
	ctx, cancel := context.WithTimeout(actx, timeout)
	defer cancel()
	began := time.Now()
	err = ready(ctx, conn)
	if err != nil {
		_ = conn.Close()
		class := engine.ClassRefused
		if errors.Is(err, context.DeadlineExceeded) {
			class = engine.ClassTimeout
		}
		c.h.Attempt(class, time.Since(began), true)
		throwf(c.rt, "client.connect(%q): %v", addr, err)
	}
	c.h.Attempt(engine.ClassOK, time.Since(began), true)
	c.conn, c.addr = conn, addr
	c.unwatch = context.AfterFunc(c.h.Context(), func() { _ = conn.Close() })
	if reflectIt {
		fds, err := reflect(ctx, conn)
		if err != nil {
			throwf(c.rt, "client.connect(%q): reflection: %v", addr, err)
		}
		c.add(fds)
	}
}

// ready waits until conn is connected; a failed attempt to connect ends
// the wait at once rather than at the timeout.
func ready(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return fmt.Errorf("connection failed (%s)", strings.ToLower(s.String()))
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

// abortCtx is a context done when the VU's phase aborts it, or when
// cancel is called (the call is over).
func (c *client) abortCtx() (context.Context, context.CancelFunc) {
	return context.WithCancel(c.h.Context())
}
