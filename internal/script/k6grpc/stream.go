package k6grpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/throttlekit/throttle/internal/script/protohost"
)

// streamEvents are the events a Stream's on() takes.
var streamEvents = []string{"data", "error", "end"}

// stream is one grpc.Stream: a client, server or bidirectional streaming
// call whose messages arrive on the VU's event loop.
type stream struct {
	c         *client
	rt        *sobek.Runtime
	name      string
	out       protoreflect.MessageDescriptor
	in        protoreflect.MessageDescriptor
	cs        grpc.ClientStream
	cancel    context.CancelFunc
	hold      protohost.Hold
	listeners map[string][]sobek.Callable
	tags      map[string]string
	began     time.Time
	ended     bool
}

// newStream is `new grpc.Stream(client, method, params)`: the call opens
// at once; the stream holds the VU's event loop until it ends.
func newStream(h Host, call sobek.ConstructorCall) {
	rt := h.Runtime()
	c := clientOf(call.Argument(0))
	if c == nil {
		throw(rt, errors.New("new grpc.Stream(client, method, params): want a grpc.Client first"))
	}
	method := call.Argument(1).String()
	if c.conn == nil {
		throw(rt, errors.New("new grpc.Stream: no gRPC connection, call connect first"))
	}
	name := strings.TrimPrefix(method, "/")
	md, ok := c.methods[name]
	if !ok {
		throwf(rt, "new grpc.Stream: method %q not found in the loaded descriptors", method)
	}
	if !md.IsStreamingClient() && !md.IsStreamingServer() {
		throwf(rt, "new grpc.Stream: %s is a unary method; use client.invoke", name)
	}
	p := c.params("Stream", call.Argument(2))
	s := &stream{c: c, rt: rt, name: name, out: md.Output(), in: md.Input(), listeners: map[string][]sobek.Callable{},
		tags: c.tags(name, p.tags, "stream"), began: time.Now()}
	ctx, cancel := c.abortCtx()
	if p.timeoutSet {
		ctx, cancel = withTimeout(ctx, cancel, p.timeout)
	}
	s.cancel = cancel
	cs, err := c.conn.NewStream(metadataCtx(ctx, p), &grpc.StreamDesc{StreamName: string(md.Name()),
		ServerStreams: md.IsStreamingServer(), ClientStreams: md.IsStreamingClient()}, "/"+name)
	if err != nil {
		cancel()
		throwf(rt, "new grpc.Stream(%q): %v", name, err)
	}
	s.cs = cs
	c.h.Sample("grpc_streams", 1, s.tags)
	s.hold = h.Hold(cancel)
	o := call.This
	_ = o.Set("on", func(event string, fn sobek.Value) {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			throwf(rt, "stream.on(%q, listener): the listener must be a function", event)
		}
		known := false
		for _, e := range streamEvents {
			known = known || e == event
		}
		if !known {
			throwf(rt, "stream.on: unknown event %q (want data, error, end)", event)
		}
		s.listeners[event] = append(s.listeners[event], f)
	})
	_ = o.Set("write", s.write)
	_ = o.Set("end", func() {
		if !s.ended {
			_ = s.cs.CloseSend()
		}
	})
	go s.read()
}

// write sends one message on the stream.
func (s *stream) write(v sobek.Value) {
	if s.ended {
		throw(s.rt, errors.New("stream.write: the stream has ended"))
	}
	msg := dynamicpb.NewMessage(s.in)
	if err := s.c.decode(v, msg); err != nil {
		throwf(s.rt, "stream.write: the message is not a %s: %v", s.in.FullName(), err)
	}
	if err := s.cs.SendMsg(msg); err != nil && !errors.Is(err, io.EOF) {
		throwf(s.rt, "stream.write: %v", err)
	}
	s.c.h.Sample("grpc_streams_msgs_sent", 1, s.tags)
}

// read receives the stream's messages on its own goroutine, handing each
// to the VU's, then its end. A Go panic in it (throttle's bug) is
// recovered: the stream ends failed (its status Unknown, class other).
func (s *stream) read() {
	if err := s.readRecovered(); err != nil {
		s.hold.Post(func() error { return s.finish(err) })
		s.hold.Release()
	}
}

func (s *stream) readRecovered() (err error) {
	defer s.c.h.Panics().Recover("a gRPC stream", &err)
	for {
		msg := dynamicpb.NewMessage(s.out)
		err := s.cs.RecvMsg(msg)
		protohost.Checkpoint("grpc.stream")
		at := time.Now()
		if err != nil {
			s.hold.Post(func() error { return s.finish(err) })
			s.hold.Release()
			return nil
		}
		s.hold.Post(func() error { return s.data(msg, at) })
	}
}

// data hands one message to the data listeners, with {ts} metadata.
func (s *stream) data(msg *dynamicpb.Message, at time.Time) error {
	s.c.h.Sample("grpc_streams_msgs_received", 1, s.tags)
	v, err := s.c.encode(msg)
	if err != nil {
		return err
	}
	meta := s.rt.NewObject()
	_ = meta.Set("ts", at.UnixMilli())
	return s.emit("data", v, meta)
}

// finish ends the stream: one attempt by its status; error (a status
// other than OK) then end.
func (s *stream) finish(err error) error {
	s.ended = true
	s.cancel()
	code := codes.OK
	if !errors.Is(err, io.EOF) {
		code = status.Code(err)
	}
	took := time.Since(s.began)
	s.tags["status"] = fmt.Sprint(int(code))
	s.c.h.Sample("grpc_req_duration", ms(took), s.tags)
	s.c.h.Attempt(classOf(code), took, true)
	if code != codes.OK {
		if err := s.emit("error", s.c.errorObject(status.Convert(err))); err != nil {
			return err
		}
	}
	return s.emit("end")
}

func (s *stream) emit(event string, args ...sobek.Value) error {
	for _, f := range s.listeners[event] {
		if _, err := f(sobek.Undefined(), args...); err != nil {
			return err
		}
	}
	return nil
}
