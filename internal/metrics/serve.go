package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Path is where a Server serves the registry.
const Path = "/metrics"

// AddrError is an ADDR that is not an address: bad input, as opposed to a
// well-formed address the machine refused (in use, not local).
type AddrError struct {
	Addr   string
	Reason string
}

func (e *AddrError) Error() string { return fmt.Sprintf("address %q: %s", e.Addr, e.Reason) }

// ListenAddr is the address a Server listens on for ADDR: ADDR itself, with
// loopback (127.0.0.1) for an empty host, so ":9100" is reachable from this
// machine only and exposing the metrics takes naming a host ("0.0.0.0:9100").
// The port must be a number (0 picks a free one).
func ListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		reason := "want HOST:PORT or :PORT"
		if errors.As(err, &ae) && ae.Err != "missing port in address" {
			reason = ae.Err + "; " + reason
		}
		return "", &AddrError{addr, reason}
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || strconv.FormatUint(n, 10) != port {
		return "", &AddrError{addr, "the port must be a number from 0 to 65535"}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server serves a Registry on Path over HTTP until Close.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	err  error
}

// Listen binds ADDR (see ListenAddr) and serves r there: when it returns,
// the address is bound and scrapes are answered. Errors are an *AddrError
// for an ADDR that is not an address, else the listener's error.
func Listen(addr string, r *Registry) (*Server, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, r.Handler())
	s := &Server{
		ln:   ln,
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// Addr is the bound address (with the port the system picked for port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the metrics URL, e.g. "http://127.0.0.1:9100/metrics".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + Path }

// shutdownGrace is how long Close lets scrapes in progress finish.
const shutdownGrace = 2 * time.Second

// Close stops the server: it stops accepting, lets scrapes in progress
// finish for a moment, then closes what is left, and returns once every
// goroutine it started has ended. It returns what went wrong serving, if
// anything. Call it once.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return s.err
}
