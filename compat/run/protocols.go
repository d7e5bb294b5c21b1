package main

import (
	"net/http"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/throttlekit/throttle/internal/protoecho"
)

// withProtocols is the loopback server's handler: mux with the WebSocket
// endpoint /ws/echo (protoecho's echo), and protoecho's gRPC server (Echo,
// reflection, health) on the same port over cleartext HTTP/2, so a script
// reaches it at BASE_URL's host:port. wrap (the request counter) sees
// every request, each gRPC call by its path (/throttle.echo.Echo/Say).
func withProtocols(mux *http.ServeMux, wrap func(http.Handler) http.Handler) (http.Handler, error) {
	mux.HandleFunc("/ws/echo", protoecho.WebSocket)
	srv, err := protoecho.NewGRPC()
	if err != nil {
		return nil, err
	}
	return h2c.NewHandler(wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			srv.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})), &http2.Server{}), nil
}
