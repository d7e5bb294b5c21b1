package protoecho

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/throttlekit/throttle/internal/target"
)

// dial connects to a ServeGated server in front of h; the server and the
// connection end with the test.
func dial(t *testing.T, h http.Handler) *grpc.ClientConn {
	t.Helper()
	addr, stop, err := ServeGated(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// say calls Echo/Say with an empty SayRequest (an empty message's bytes
// decode as any message); the reply's fields are not read.
func say(conn *grpc.ClientConn) codes.Code {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return status.Code(conn.Invoke(ctx, "/"+Service+"/Say", &emptypb.Empty{}, &emptypb.Empty{}))
}

// TestGateMapsStatuses: the handler's answer decides each Say call (200
// served, 503 RESOURCE_EXHAUSTED, 500 INTERNAL, others UNKNOWN), one
// request to the handler per call; health checks do not pass the gate.
func TestGateMapsStatuses(t *testing.T) {
	var code atomic.Int64
	var requests atomic.Int64
	conn := dial(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/"+Service+"/Say" {
			t.Errorf("path %q", r.URL.Path)
		}
		w.WriteHeader(int(code.Load()))
	}))
	for _, c := range []struct {
		http int
		want codes.Code
	}{{200, codes.OK}, {503, codes.ResourceExhausted}, {500, codes.Internal}, {429, codes.Unknown}} {
		code.Store(int64(c.http))
		if got := say(conn); got != c.want {
			t.Errorf("HTTP %d: got %v, want %v", c.http, got, c.want)
		}
	}
	code.Store(503)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: Service})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health behind a shedding gate: %v, %v", resp, err)
	}
	if n := requests.Load(); n != 4 {
		t.Errorf("%d requests to the handler, want 4 (one per Say call)", n)
	}
}

// TestGateShedsByTheTargetsModel: behind the built-in target with a bucket
// of one token that refills once an hour, the first call is served and the
// next ones are shed RESOURCE_EXHAUSTED, as the target answers 503.
func TestGateShedsByTheTargetsModel(t *testing.T) {
	tc := target.NewConfig(1.0 / 3600)
	tc.Latency = 0
	tg, err := target.New(tc)
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, tg)
	if got := say(conn); got != codes.OK {
		t.Fatalf("first call: %v", got)
	}
	for i := 0; i < 3; i++ {
		if got := say(conn); got != codes.ResourceExhausted {
			t.Fatalf("call %d over capacity: %v", i+2, got)
		}
	}
	if s := tg.Stats(); s.OK != 1 || s.Shed != 3 {
		t.Errorf("target counted ok %d, shed %d; want 1, 3", s.OK, s.Shed)
	}
}
