// Package protoecho is a loopback Echo service over gRPC (echo.proto,
// served with dynamic messages: no generated code, no protoc) with server
// reflection and the standard health service, and a WebSocket echo
// handler: what the k6/net/grpc and k6/ws tests and the compat suite
// talk to.
package protoecho

import (
	"context"
	_ "embed"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/gorilla/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Proto is echo.proto's source; ProtoFile its file name.
//
//go:embed echo.proto
var Proto string

// ProtoFile is the name Proto is compiled under.
const ProtoFile = "echo.proto"

// Service is the Echo service's full name (its health check's name).
const Service = "throttle.echo.Echo"

// NewGRPC makes a gRPC server with the Echo service (Say answers text
// repeated times times, the x-in metadata echoed in echoed_header, an
// x-served-by header; "shed" is answered RESOURCE_EXHAUSTED, "slow" only
// when the call's deadline passes; the Chat stream answers each message
// as Say does),
// reflection over its files, and health (Service SERVING). opts are the
// server's (Gate's interceptor, for one).
func NewGRPC(opts ...grpc.ServerOption) (*grpc.Server, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{ProtoFile: Proto}),
	})}
	files, err := c.Compile(context.Background(), ProtoFile)
	if err != nil {
		return nil, err
	}
	fd := files[0]
	svc := fd.Services().ByName("Echo")
	say := svc.Methods().ByName("Say")
	// The reflection service answers from this registry: the Echo file is
	// not among the process's generated ones.
	reg := &protoregistry.Files{}
	for _, f := range []protoreflect.FileDescriptor{wrapperspb.File_google_protobuf_wrappers_proto, fd,
		healthpb.File_grpc_health_v1_health_proto, reflectionpb.File_grpc_reflection_v1_reflection_proto} {
		if err := reg.RegisterFile(f); err != nil {
			return nil, err
		}
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: string(svc.FullName()),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Say", Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(say.Input())
			if err := dec(in); err != nil {
				return nil, err
			}
			handle := func(ctx context.Context, _ any) (any, error) { return answer(ctx, say, in) }
			if icpt == nil {
				return handle(ctx, in)
			}
			return icpt(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/" + Service + "/Say"}, handle)
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "Chat", ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, ss grpc.ServerStream) error { return chat(ss, svc.Methods().ByName("Chat")) }}},
	}, struct{}{})
	hs := health.NewServer()
	hs.SetServingStatus(Service, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflectionpb.RegisterServerReflectionServer(srv, reflection.NewServerV1(reflection.ServerOptions{Services: srv, DescriptorResolver: reg}))
	return srv, nil
}

// answer is Say's reply to in.
func answer(ctx context.Context, say protoreflect.MethodDescriptor, in *dynamicpb.Message) (any, error) {
	text := in.Get(say.Input().Fields().ByName("text")).String()
	times := max(int(in.Get(say.Input().Fields().ByName("times")).Int()), 1)
	switch text {
	case "shed":
		return nil, status.Error(codes.ResourceExhausted, "over capacity")
	case "slow":
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	md, _ := metadata.FromIncomingContext(ctx)
	_ = grpc.SetHeader(ctx, metadata.Pairs("x-served-by", "echo"))
	out := dynamicpb.NewMessage(say.Output())
	f := say.Output().Fields()
	out.Set(f.ByName("text"), protoreflect.ValueOfString(strings.Repeat(text, times)))
	out.Set(f.ByName("count"), protoreflect.ValueOfInt32(int32(times)))
	if v := md.Get("x-in"); len(v) > 0 {
		out.Set(f.ByName("echoed_header"), protoreflect.ValueOfMessage(wrapperspb.String(v[0]).ProtoReflect()))
	}
	return out, nil
}

// chat is the Chat stream: each message answered as Say answers it,
// until the client ends its side; "shed" ends the stream
// RESOURCE_EXHAUSTED.
func chat(ss grpc.ServerStream, m protoreflect.MethodDescriptor) error {
	for {
		in := dynamicpb.NewMessage(m.Input())
		if err := ss.RecvMsg(in); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		out, err := answer(ss.Context(), m, in)
		if err != nil {
			return err
		}
		if err := ss.SendMsg(out); err != nil {
			return err
		}
	}
}

var upgrader = websocket.Upgrader{}

// WebSocket is a WebSocket echo endpoint: every message goes back as it
// came; with ?ping=1 the server pings first; the text "bye" makes it
// close with code 4000.
func WebSocket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	if r.URL.Query().Get("ping") == "1" {
		_ = c.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second))
	}
	for {
		kind, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		if string(data) == "bye" {
			_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye"), time.Now().Add(time.Second))
			continue
		}
		if err := c.WriteMessage(kind, data); err != nil {
			return
		}
	}
}
