package engine

import (
	"context"
	"net"
	"sync"
	"time"
)

// dialDeadline is the abort context with an attempt's deadline, for the
// connect to a literal IP address. Its Done is the abort's: it does not
// close at the deadline. That is enough there, and only there: net gives
// the socket a dial context's Deadline as its write deadline, which ends
// the connect ("i/o timeout", as a timer context's expiry reads), and asks
// no resolver about an IP address. TestRawConnectLikeFastHTTP's connect
// timeout checks the error is fasthttp's, not the kernel's own timeout.
// net keeps no reference to one after DialContext returns: the connect's
// own abort hook is removed by then, and an abort's cancel does not read
// its parent.
type dialDeadline struct {
	context.Context
	deadline time.Time
}

func (c *dialDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

// connectJob is one connect through net's Dialer, run on a goroutine of
// its own while the runner's goroutine waits for it (connect): for a host
// name (resolved at each dial) and an IPv6 address; a literal IPv4
// address is connected on the runner's own goroutine (connectDirect,
// rawdial_linux.go), without net's dial path. Jobs are pooled, not kept
// per runner: a sleeping VU holds none.
//
// Why another goroutine: net's dial path (Dialer.DialContext,
// dialParallel, dialSerial, dialSingle, dialTCP, socket, netFD.dial,
// netFD.connect, the poller's wait) took a connection's first request 4.7
// KiB below Runner.Iterate, 2 KiB deeper than a keep-alive request; under
// a CLI VU's own 3.1 KiB of frames that is past the 8 KiB a GC leaves a
// sleeping VU, so the runtime doubled the stack to 16 KiB, and a GC
// halves it only while less than 3 296 bytes of it are in use, which a
// CLI VU asleep in sleep() is not (it kept 16 KiB through every GC). Run
// here, the VU's goroutine only parks on done; the
// connect's goroutine grows and is gone when it returns. A connect is rare
// (once per connection with keep-alive) and costs far more than the
// goroutine, its switches and its one allocation: 10–20 µs of CPU where
// the process has idle cores (each goroutine made runnable wakes one),
// against 140–200 µs for a request on a new connection
// (docs/performance.md, "A request in the VU's 8 KiB stack").
// TestRawConnectNoDeeperThanRequest.
type connectJob struct {
	d    net.Dialer
	dd   dialDeadline
	ctx  context.Context
	addr string
	conn net.Conn
	err  error
	done chan struct{} // one token per run: buffered, so run never waits
}

var connectJobs = sync.Pool{New: func() any { return &connectJob{done: make(chan struct{}, 1)} }}

// run connects. Sending on done is its last touch of j: the waiting
// runner takes j back to the pool once it has the token.
func (j *connectJob) run() {
	reserveStack()
	j.conn, j.err = j.d.DialContext(j.ctx, "tcp", j.addr)
	j.done <- struct{}{}
}

// reserveStack grows a new goroutine's stack to 8 KiB at once, while it
// holds two frames, so that the connect's 2.5 KiB of frames do not grow
// it on the way: the runtime grows a stack by copying it, adjusting every
// frame's pointers, and grown from 2 KiB under the connect's twenty frames
// that was 60 000 instructions a connect, more than the connect's own
// user-space work. (A goroutine starts with the average stack the last GC
// found in use, rounded up: 8 KiB where VUs are many, 2 KiB in a
// benchmark.)
//
//go:noinline
func reserveStack() byte {
	var frame [4 << 10]byte
	return keepFrame(frame[:])
}

//go:noinline
func keepFrame(b []byte) byte { return b[len(b)-1] }

// dial connects to h within the deadline, timing it; the abort context
// cuts the connect off and later closes the connection. A host
// connectDirect dials (h.direct) goes there (dialDirect); what follows
// is net's dial, for the others.
//
// The Dialer is the fasthttp transport's (fastHost.dial): the same
// deadline, and TCP keep-alive probes after 30 s idle, as fasthttp's own
// dialer also enables them (Go's default); an idle connection is kept up
// to rawMaxIdle, long enough for a probe to find a dead peer.
//
// A literal IP address is dialled with a dialDeadline, which
// carries the deadline itself, so DialContext makes no timer context of
// its own: seven allocations, a timer and a registration with the abort
// context fewer per dial. A host name keeps the Dialer's Deadline: its
// lookup must end at the deadline, which dialDeadline's Done does not
// tell it. (Dialer.DialTCP, which takes a netip.AddrPort and skips the
// resolver pass, binds the socket to 0.0.0.0:0 before the connect when
// given no local address (Go 1.26), taking an ephemeral port without
// regard to the destination; it saved two allocations.)
func (c *rawConn) dial(h *rawHost, deadline time.Time, tr *rawTrace) error {
	abort := c.s.abort
	if h.stop == nil {
		h.stop = context.AfterFunc(abort, h.abort)
	}
	if h.direct != nil {
		return c.dialDirect(h, abort, deadline, tr)
	}
	t0 := time.Now()
	conn, err := c.connect(h, abort, deadline)
	if err != nil {
		return err
	}
	tr.dialed, tr.connect = true, time.Since(t0)
	h.setConn(conn)
	// An abort between the connect and setConn found no connection to
	// close: its error is set before its hooks run, so it shows here.
	if err := abort.Err(); err != nil {
		h.drop()
		return err
	}
	if err := conn.SetDeadline(deadline); err != nil {
		h.drop()
		return err
	}
	h.dl = deadline
	if c.s.rxStamp {
		h.rc = rxStart(conn)
	}
	return nil
}

// dialDirect is dial for a host connectDirect dials: on the runner's
// goroutine, with the deadline set on the connection by the connect.
func (c *rawConn) dialDirect(h *rawHost, abort context.Context, deadline time.Time, tr *rawTrace) error {
	t0 := time.Now()
	sc, err := c.connectDirect(h, abort, deadline)
	if err != nil {
		return err
	}
	tr.dialed, tr.connect = true, time.Since(t0)
	// An abort after the connect whose hook ran before the connection
	// was set closed nothing: its error is set before its hooks run.
	if err := abort.Err(); err != nil {
		h.drop()
		return err
	}
	h.dl = deadline
	h.rc = sc.rxRaw()
	return nil
}

// connect runs the connect to h on a connectJob's goroutine and waits for
// it. Not inlined: the job's setup is no part of the runner's deeper
// frames.
//
//go:noinline
func (c *rawConn) connect(h *rawHost, abort context.Context, deadline time.Time) (net.Conn, error) {
	j := connectJobs.Get().(*connectJob)
	j.d = net.Dialer{KeepAlive: 30 * time.Second, Resolver: c.s.resolver}
	j.ctx, j.addr = abort, h.addr
	if h.literal && abort.Done() != nil {
		j.dd.Context, j.dd.deadline = abort, deadline
		j.ctx = &j.dd
	} else {
		j.d.Deadline = deadline
	}
	go j.run()
	<-j.done
	conn, err := j.conn, j.err
	j.d, j.dd, j.ctx, j.addr, j.conn, j.err = net.Dialer{}, dialDeadline{}, nil, "", nil, nil
	connectJobs.Put(j)
	return conn, err
}
