package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// A plain-http target is sent over the worker's own connection rather than
// through http.Transport. The transport runs two goroutines per connection
// and hands every request and response between them and the caller over
// channels, and it arms a timer and a context per request: on a loopback
// target that bookkeeping cost as much client CPU as the system calls
// themselves. A worker runs one attempt at a time, so it needs none of it:
// it writes the request's prepared bytes, reads the status and the body's
// framing (readResponse), drains the body, and
// keeps the connection for the next attempt. The attempt's timeout is the
// connection's deadline. HTTPS targets still go through the transport.

// wire is a plain-http target prepared for a worker's own connection.
type wire struct {
	addr int // index into Engine.addrs: the worker's connection slot
	// bytes is the request exactly as http.Transport would write it; nil
	// when the target goes through the transport.
	bytes []byte
	// replayable says the request may be sent again on a fresh connection
	// when a kept connection turns out to have been closed by the server
	// before answering, as http.Transport does: an idempotent method, or an
	// Idempotency-Key header.
	replayable bool
}

// prepareWire returns req's plain-http form, or ok false when req must go
// through the transport (TLS, or a host the transport would rewrite). index
// maps the addresses in e.addrs to their positions.
func (e *Engine) prepareWire(req *http.Request, index map[string]int) (wire, bool) {
	u := req.URL
	if u.Scheme != "http" || u.User != nil {
		return wire{}, false
	}
	host := u.Hostname()
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 { // the transport would convert it to punycode
			return wire{}, false
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	addr := net.JoinHostPort(host, port)
	var buf bytes.Buffer
	r := req.Clone(context.Background())
	if req.GetBody != nil {
		r.Body, _ = req.GetBody()
	}
	// Request.Write is what the transport writes on an HTTP/1.1 connection
	// without a proxy (with compression disabled it adds no header).
	if err := r.Write(&buf); err != nil {
		return wire{}, false
	}
	w := wire{bytes: buf.Bytes()}
	switch req.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
		w.replayable = true
	default:
		_, a := req.Header["Idempotency-Key"]
		_, b := req.Header["X-Idempotency-Key"]
		w.replayable = a || b
	}
	a, ok := index[addr]
	if !ok {
		a = len(e.addrs)
		index[addr] = a
		e.addrs = append(e.addrs, addr)
	}
	w.addr = a
	return w, true
}

// maxIdleNonReplayable is how long a kept connection may have been idle and
// still carry a request that could not be sent again (a POST): the transport
// notices at once when a server closes an idle connection, a worker only
// when it next uses it, and the shortest keep-alive timeouts servers use
// are a few seconds.
const maxIdleNonReplayable = time.Second

// conn is one of a worker's kept connections. Only its worker uses it.
type conn struct {
	nc     net.Conn
	br     *bufio.Reader
	used   bool        // a response has been read on it: it is a kept one
	sent   time.Time   // when its latest request started
	unhook func() bool // stops the hook that closes nc when the engine aborts
}

// dial opens a connection to the engine's address slot a, bounded by
// deadline and cut off by Abort.
func (w *worker) dial(a int, deadline time.Time) (*conn, error) {
	e := w.e
	ctx, cancel := context.WithDeadline(e.hard, deadline)
	defer cancel()
	nc, err := e.dialer.DialContext(ctx, "tcp", e.addrs[a])
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc, br: bufio.NewReaderSize(nc, 4096)}
	// An aborting engine cuts off whatever the connection is waiting for.
	c.unhook = context.AfterFunc(e.hard, func() { nc.Close() })
	return c, nil
}

// conn returns the worker's kept connection to address a, nil for none.
func (w *worker) conn(a int) *conn {
	if w.conns != nil {
		return w.conns[a]
	}
	return w.connsByAddr[a]
}

// keep makes c the worker's connection to address a.
func (w *worker) keep(a int, c *conn) {
	if w.conns != nil {
		w.conns[a] = c
		return
	}
	if w.connsByAddr == nil {
		w.connsByAddr = make(map[int]*conn)
	}
	w.connsByAddr[a] = c
}

// drop closes the connection to address a.
func (w *worker) drop(a int) {
	if c := w.conn(a); c != nil {
		c.unhook()
		c.nc.Close()
		if w.conns != nil {
			w.conns[a] = nil
		} else {
			delete(w.connsByAddr, a)
		}
	}
}

// dropAll closes all the worker's connections.
func (w *worker) dropAll() {
	for a := range w.conns {
		w.drop(a)
	}
	for a := range w.connsByAddr {
		w.drop(a)
	}
}

// roundTrip sends the plain-http target i once on the worker's connection
// and reads the whole response, body drained. It returns the status code,
// or the error that ended the exchange. A connection the server closed
// while it was kept is replaced, and a replayable request sent again, once.
func (w *worker) roundTrip(i int) (status int, err error) {
	t := &w.e.wires[i]
	now := time.Now()
	deadline := now.Add(w.e.cfg.Timeout)
	for {
		c := w.conn(t.addr)
		if c != nil && (c.br.Buffered() > 0 || !t.replayable && now.Sub(c.sent) > maxIdleNonReplayable) {
			// Bytes nobody asked for: the server is out of step with the
			// connection. Or it may have been closed by the server while
			// idle, and this request could not be sent again if it had.
			// Start afresh.
			w.drop(t.addr)
			c = nil
		}
		if c == nil {
			if c, err = w.dial(t.addr, deadline); err != nil {
				return 0, err
			}
			w.keep(t.addr, c)
		}
		c.sent = now
		status, retry, err := w.exchange(c, i, deadline)
		if err == nil {
			return status, nil
		}
		w.drop(t.addr)
		if !retry {
			return 0, err
		}
	}
}

// exchange is one request and response on c. retry says the request may be
// sent again on a fresh connection: c was a kept connection that failed
// before any of the response arrived (the server had closed it), and either
// nothing was written or the request is replayable.
func (w *worker) exchange(c *conn, i int, deadline time.Time) (status int, retry bool, err error) {
	t := &w.e.wires[i]
	kept := c.used
	if err = c.nc.SetDeadline(deadline); err != nil {
		return 0, false, err
	}
	n, err := c.nc.Write(t.bytes)
	if err != nil {
		return 0, kept && (n == 0 || t.replayable) && closedByPeer(err), err
	}
	if _, err = c.br.Peek(1); err != nil {
		return 0, kept && t.replayable && closedByPeer(err), err
	}
	status, keep, err := readResponse(c.br, w.e.reqs[i].Method == http.MethodHead)
	if err != nil {
		return 0, false, err
	}
	c.used = true
	if !keep {
		// The server closes the connection after this response: keep the
		// outcome, drop the connection.
		w.drop(t.addr)
	}
	return status, false, nil
}

// closedByPeer reports whether err says the server had closed the
// connection: what a kept connection shows when its keep-alive ran out.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
