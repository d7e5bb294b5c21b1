package agent

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// DefaultListen is where the controller's NATS server listens unless told
// otherwise: loopback, NATS's usual port.
const DefaultListen = "127.0.0.1:4222"

// tokenCheck is the embedded server's authentication: a client presents
// the run's token or is refused, and the controller says so in one line.
type tokenCheck struct {
	token string
	log   *slog.Logger
}

func (t tokenCheck) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	if subtle.ConstantTimeCompare([]byte(o.Token), []byte(t.token)) == 1 {
		return true
	}
	who := "in-process"
	if a := c.RemoteAddress(); a != nil {
		who = a.String()
	}
	name := o.Name
	if name == "" {
		name = "?"
	}
	t.log.Warn("throttle agent refused: wrong token", "agent", name, "from", who)
	return false
}

// serve starts the embedded NATS server on listen (host:port; port 0 picks
// a free one), refusing clients without token.
func serve(listen, token string, tls TLS, log *slog.Logger) (*server.Server, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT", listen)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("--listen %q: bad port", listen)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	if token == "" {
		return nil, fmt.Errorf("agents need a token (--token)")
	}
	opts := &server.Options{Host: host, Port: p, NoSigs: true, NoLog: true, MaxPayload: 8 << 20,
		CustomClientAuthentication: tokenCheck{token: token, log: log},
		// A process making tens of thousands of VUs on a loaded machine
		// stalls for seconds; the server's default (10 s) would close a
		// stalled reader as a slow consumer: the controller's own
		// connection (an in-process pipe that buffers nothing) first,
		// and with it the run. A dead peer is seen by its socket anyway.
		WriteDeadline: WriteDeadline}
	if err := tls.serverOptions(opts); err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("starting the agents' NATS server on %s: %w", listen, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("the agents' NATS server could not listen on %s", listen)
	}
	return srv, nil
}

// WriteDeadline bounds how long the agents' server waits on a client that
// does not read (then it closes it as a slow consumer).
const WriteDeadline = 2 * time.Minute

// clientURL is the nats:// address agents join.
func clientURL(srv *server.Server) string {
	if a, ok := srv.Addr().(*net.TCPAddr); ok {
		return "nats://" + net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
	}
	return srv.ClientURL()
}

// connectInProcess is the controller's own connection to its server.
func connectInProcess(srv *server.Server, token string) (*nats.Conn, error) {
	return nats.Connect("", nats.InProcessServer(srv), nats.Token(token), nats.Name("throttle-controller"))
}
