package protoecho

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Gate puts the Echo service's unary calls behind h, an HTTP handler that
// decides by its status whether a request is served: the built-in target
// (internal/target), so a gRPC server gets the target's known capacity and
// failure model without a second rate limiter. Each call is one request to
// h, carrying the call's context (a client that leaves cancels it); 200 lets
// the call through, 503 (shed, expired, down) is RESOURCE_EXHAUSTED (a
// server shedding load), 500 (collapse) INTERNAL, any other status
// UNKNOWN, and no answer at all (the client left) the context's error.
// Health and reflection are not gated: they are not the load.
func Gate(h http.Handler) grpc.UnaryServerInterceptor {
	prefix := "/" + Service + "/"
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if !strings.HasPrefix(info.FullMethod, prefix) {
			return next(ctx, req)
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, info.FullMethod, http.NoBody)
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		w := &statusWriter{header: http.Header{}}
		h.ServeHTTP(w, r)
		switch w.code {
		case http.StatusOK:
			return next(ctx, req)
		case http.StatusServiceUnavailable:
			return nil, status.Error(codes.ResourceExhausted, "over capacity")
		case http.StatusInternalServerError:
			return nil, status.Error(codes.Internal, "collapsed")
		case 0:
			if err := ctx.Err(); err != nil {
				return nil, status.FromContextError(err).Err()
			}
			return nil, status.Error(codes.Unavailable, "no answer")
		default:
			return nil, status.Errorf(codes.Unknown, "HTTP status %d", w.code)
		}
	}
}

// statusWriter keeps the status a handler answers with; the body is not
// needed.
type statusWriter struct {
	header http.Header
	code   int
}

func (w *statusWriter) Header() http.Header { return w.header }
func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *statusWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}

// ServeGated serves the Echo service on a loopback port, its calls behind
// Gate(h); addr is its host:port, stop ends it (the calls in flight get a
// second, then are cut).
func ServeGated(h http.Handler) (addr string, stop func(), err error) {
	srv, err := NewGRPC(grpc.UnaryInterceptor(Gate(h)))
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("starting the gRPC target: %w", err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	return ln.Addr().String(), func() {
		t := time.AfterFunc(time.Second, srv.Stop)
		defer t.Stop()
		srv.GracefulStop()
		<-served
	}, nil
}
