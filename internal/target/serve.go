package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// DefaultAddr is where Serve listens when given no address: loopback, on a
// port the system picks.
const DefaultAddr = "127.0.0.1:0"

// DefaultShutdownGrace is how long Serve lets requests in progress finish
// once its context ends, before it closes their connections.
const DefaultShutdownGrace = 5 * time.Second

// ServeOption configures Serve.
type ServeOption func(*serveConfig)

type serveConfig struct {
	anyAddr bool
	grace   time.Duration
}

// AllowNonLoopback lets Serve listen on addresses other than loopback. The
// built-in target is a test instrument that can be overloaded on purpose;
// exposing it beyond the machine must be a deliberate choice, so the CLI
// offers it only behind an explicit flag.
func AllowNonLoopback() ServeOption { return func(c *serveConfig) { c.anyAddr = true } }

// WithShutdownGrace sets how long requests in progress may take to finish
// after the context ends (default DefaultShutdownGrace).
func WithShutdownGrace(d time.Duration) ServeOption {
	return func(c *serveConfig) { c.grace = d }
}

// Server is a running built-in target. It stops when the context given to
// Serve ends.
type Server struct {
	addr net.Addr
	done chan struct{}
	err  error
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.addr }

// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return "http://" + s.addr.String() }

// Wait blocks until the server has shut down after its context ended and
// returns what went wrong serving, if anything.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Serve listens on addr (DefaultAddr when empty) and serves t until ctx
// ends, then shuts down gracefully: it stops accepting, lets requests in
// progress finish for up to the shutdown grace, and closes the rest. It
// refuses an address that is not loopback unless AllowNonLoopback is given;
// "host:port" with a host of localhost, 127.0.0.0/8 or ::1 is loopback, an
// empty host (every interface) is not.
func Serve(ctx context.Context, addr string, t *Target, opts ...ServeOption) (*Server, error) {
	if t == nil {
		return nil, errors.New("no target to serve")
	}
	cfg := serveConfig{grace: DefaultShutdownGrace}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.grace < 0 {
		return nil, fmt.Errorf("shutdown grace must be >= 0, got %v", cfg.grace)
	}
	if addr == "" {
		addr = DefaultAddr
	}
	if !cfg.anyAddr {
		if err := checkLoopback(addr); err != nil {
			return nil, err
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           t,
		ReadHeaderTimeout: 10 * time.Second,
	}
	s := &Server{addr: ln.Addr(), done: make(chan struct{})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go func() {
		defer close(s.done)
		select {
		case err := <-served: // failed on its own
			s.err = fmt.Errorf("serve: %w", err)
			return
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.Background(), cfg.grace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close() // grace is over: drop what is left
		}
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("serve: %w", err)
		}
	}()
	return s, nil
}

// checkLoopback accepts only listen addresses on loopback.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "" {
		return fmt.Errorf("listen address %q listens on every interface; use 127.0.0.1 (or allow non-loopback addresses explicitly)", addr)
	}
	return fmt.Errorf("listen address %q is not loopback; use 127.0.0.1 (or allow non-loopback addresses explicitly)", addr)
}
