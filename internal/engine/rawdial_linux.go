//go:build linux

package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The connect to a literal IPv4 address, on the VU's own goroutine.
//
// net's dial path (Dialer.DialContext down to the poller's wait) is twenty
// frames and 4.7 KiB of stack deep, too deep for a VU's 8 KiB stack, so it
// ran on a goroutine of its own (connectJob), and its user-space work was
// more than the connect's own: the resolver pass, the dial's contexts and
// its abort hook, a goroutine and its hand-off, the connection's
// finalizer and addresses, some twenty allocations. Here the socket is
// made with the same system calls and options as net's (TCP_NODELAY; the
// Dialer's keep-alive: SO_KEEPALIVE, TCP_KEEPIDLE 30 s, TCP_KEEPINTVL 15
// s, TCP_KEEPCNT 9; the receive stamps' SO_TIMESTAMPNS when they are on),
// but not getsockname (the local address is read when first asked for),
// and handed to Go's poller as an os.File, whose reads, writes and
// deadlines are the poller's, as a net.Conn's. sockConn gives back the
// errors a *net.TCPConn would (net.OpError with net's operation names
// and addresses, os.SyscallError around an errno, net.ErrClosed), so the
// classes, error codes and texts are those of net's dial
// (TestRawConnectLikeFastHTTP, TestSockConnErrorsLikeNet).
// docs/performance.md, "The first iteration's cost (issue 26, session 14)".

// directAddr is a host's address for connectDirect, made once per host.
type directAddr struct {
	sa   *unix.SockaddrInet4
	addr *net.TCPAddr // the connections' RemoteAddr, and the dial errors'
}

// newDirect is ap's directAddr, or nil when net dials it: only an IPv4
// address is dialled here (not IPv4-mapped IPv6, nor IPv6, which net
// dials with options of its own).
func newDirect(ap netip.AddrPort) *directAddr {
	if !ap.Addr().Is4() {
		return nil
	}
	return &directAddr{
		sa:   &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()},
		addr: net.TCPAddrFromAddrPort(ap),
	}
}

// rxRaw is the RawConn whose reads are stamped, for a connection
// connectDirect made with SO_TIMESTAMPNS (rxStart's, for net's); nil for
// one without.
func (c *sockConn) rxRaw() syscall.RawConn {
	if !c.stamped {
		return nil
	}
	return &c.raw
}

// errDialCanceled is net's error for a dial whose context was canceled
// (net's errCanceled, which is unexported): its text, and
// context.Canceled for errors.Is.
type dialCanceled struct{}

func (dialCanceled) Error() string        { return "operation was canceled" }
func (dialCanceled) Is(target error) bool { return target == context.Canceled }

// connectDirect connects to h's address (directDial) within deadline,
// with both of the connection's deadlines set to it. h's connection is
// set as soon as the socket exists, so that the host's abort hook closes
// a connect in progress (which the poller's wait then returns from); on
// an error h has none.
func (c *rawConn) connectDirect(h *rawHost, abort context.Context, deadline time.Time) (*sockConn, error) {
	if err := abort.Err(); err != nil {
		return nil, h.dialErr(abortErr(err))
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, h.dialErr(os.NewSyscallError("socket", err))
	}
	// net sets these after the connect and ignores their errors: so does
	// this, before it, where they apply the same.
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	setInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 30)
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15)
	setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9)
	stamped := c.s.rxStamp && rxEnable(fd) == nil
	// os.NewFile sees the descriptor is non-blocking and registers it
	// with the poller; from here the File owns it.
	f := os.NewFile(uintptr(fd), "")
	if f == nil {
		unix.Close(fd)
		return nil, h.dialErr(os.NewSyscallError("socket", unix.EBADF))
	}
	sc := &sockConn{f: f, raddr: h.direct.addr}
	sc.raw.c = sc
	sc.wfn = sc.write
	if sc.frc, err = f.SyscallConn(); err != nil {
		f.Close()
		return nil, h.dialErr(err)
	}
	sc.stamped = stamped
	h.setConn(sc)
	if err := sc.connect(h.direct.sa, deadline); err != nil {
		h.setConn(nil)
		sc.Close()
		if aerr := abort.Err(); aerr != nil {
			err = abortErr(aerr)
		}
		return nil, h.dialErr(err)
	}
	return sc, nil
}

// abortErr is what net's dial returns for its context's error.
func abortErr(err error) error {
	if err == context.Canceled {
		return dialCanceled{}
	}
	if err == context.DeadlineExceeded {
		return os.ErrDeadlineExceeded
	}
	return err
}

// dialErr is err as net's dial gives it back.
func (h *rawHost) dialErr(err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: h.direct.addr, Err: err}
}

// sockConn is a TCP connection made by connectDirect: a *net.TCPConn's
// behaviour and errors over an os.File. One difference: its local
// address is read (getsockname) when first asked for, and an error of a
// connection closed before it was ever asked for names none (net's would
// name it); such an error is an aborted attempt's, which is not reported.
type sockConn struct {
	f       *os.File
	frc     syscall.RawConn // f's
	raw     sockRaw         // what SyscallConn gives: frc with net's errors
	raddr   *net.TCPAddr
	laddr   atomic.Pointer[net.TCPAddr] // read when first asked for
	closed  atomic.Bool
	stamped bool  // SO_TIMESTAMPNS is set on it
	cerr    error // connected's finding

	// Write's state, for write in the poller's RawWrite, bound once
	// (connectDirect) so that a write makes no closure.
	wfn  func(uintptr) bool
	wb   []byte
	wn   int
	werr error
}

// connect starts the connect to sa and waits, under deadline (both of the
// connection's deadlines are set to it), until it is made or has failed.
// A connect over loopback is usually made by the time the system call
// returns: then nothing waits.
func (c *sockConn) connect(sa *unix.SockaddrInet4, deadline time.Time) error {
	if err := c.f.SetDeadline(deadline); err != nil {
		return c.opErr("", err)
	}
	var err error
	cerr := c.frc.Control(func(fd uintptr) { err = unix.Connect(int(fd), sa) })
	if cerr != nil {
		return c.opErr("", cerr)
	}
	switch err {
	case nil, unix.EISCONN:
		return nil
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
	default:
		return os.NewSyscallError("connect", err)
	}
	// As net's netFD.connect: once the poller finds the socket writable,
	// SO_ERROR says how the connect ended, and getpeername that a wake-up
	// was not spurious. Checked before the first wait too: the poller's
	// write wait forgets a readiness that came before it began.
	c.cerr = nil
	if err := c.frc.Write(c.connected); err != nil {
		return c.opErr("", err)
	}
	return c.cerr
}

// connected is connect's check of the socket's state: true when the
// connect is made (cerr nil) or failed (cerr set).
//
// Its system calls, as setInt's, are raw: they return at once (no
// blocking, no wait), so the runtime need not be told of them (entering
// and leaving a system call's state was a tenth of the dial's user-space
// time); getpeername's address is read into the stack and not decoded.
func (c *sockConn) connected(fd uintptr) bool {
	var (
		nerr int32
		n    = uint32(unsafe.Sizeof(nerr))
	)
	if _, _, e := syscall.RawSyscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_ERROR,
		uintptr(unsafe.Pointer(&nerr)), uintptr(unsafe.Pointer(&n)), 0); e != 0 {
		c.cerr = os.NewSyscallError("getsockopt", e)
		return true
	}
	switch e := syscall.Errno(nerr); e {
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return false
	case unix.EISCONN:
		return true
	case 0:
		var (
			rsa unix.RawSockaddrAny
			l   = uint32(unix.SizeofSockaddrAny)
		)
		_, _, e := syscall.RawSyscall(unix.SYS_GETPEERNAME, fd, uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&l)))
		return e == 0
	default:
		c.cerr = os.NewSyscallError("connect", e)
		return true
	}
}

// setInt sets an int socket option, ignoring its error (as net does
// with these), with a raw system call (see connected).
func setInt(fd, level, opt, v int) {
	i := int32(v)
	syscall.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&i)), unsafe.Sizeof(i), 0)
}

// opErr is err from f's operation op as net gives it back: unwrapped from
// os's PathError, an errno in a SyscallError named op, a use after Close
// as net.ErrClosed; "" leaves it bare (for connect's own).
func (c *sockConn) opErr(op string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var errno syscall.Errno
	switch {
	case err == io.EOF || err == os.ErrDeadlineExceeded:
	case c.closed.Load() || errors.Is(err, os.ErrClosed):
		err = net.ErrClosed
	case op != "" && errors.As(err, &errno):
		err = os.NewSyscallError(op, errno)
	}
	return err
}

// netErr wraps an operation's error in net's OpError, with the
// connection's addresses, as *net.TCPConn does.
func (c *sockConn) netErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.raddr, Err: err}
}

func (c *sockConn) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	if err != nil && err != io.EOF {
		err = c.netErr("read", c.opErr("read", err))
	}
	return n, err
}

// Write writes b whole, or fails, as *net.TCPConn's Write: under the
// write deadline, waiting in Go's poller while the socket's send buffer
// is full. Its write(2) calls are raw, as the event loop's (rawWrite,
// evloop_sys_linux.go): on a non-blocking socket the call never waits,
// but on loopback it runs the peer's TCP receive path inside the call,
// tens of microseconds, and made as an ordinary system call that was
// long enough for sysmon to take the VU's P away, hand it to another
// thread and keep itself polling every 20 µs: 10-15 % of a script's CPU
// in BenchmarkCost/script (docs/performance.md, "A script iteration
// against the event loop's request (issue 26, session 16)").
//
// Not safe for concurrent use (its state is the connection's): the raw
// transport writes from its runner's goroutine only.
func (c *sockConn) Write(b []byte) (int, error) {
	c.wb, c.wn, c.werr = b, 0, nil
	err := c.frc.Write(c.wfn)
	n, werr := c.wn, c.werr
	c.wb, c.werr = nil, nil // holds no buffer between writes
	if err == nil {
		err = werr
	}
	if err != nil {
		err = c.netErr("write", c.opErr("write", err))
	}
	return n, err
}

// write is Write's step in the poller's RawWrite: true when c.wb is
// written or failed, false to wait until the socket is writable.
func (c *sockConn) write(fd uintptr) bool {
	raceWriting()
	for c.wn < len(c.wb) {
		k, err := rawWrite(int(fd), c.wb[c.wn:])
		switch err {
		case nil:
			c.wn += k
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			c.werr = err
			return true
		}
	}
	return true
}

// Close closes the connection; a second Close fails as net's does.
func (c *sockConn) Close() error {
	if c.closed.Swap(true) {
		return c.netErr("close", net.ErrClosed)
	}
	if err := c.f.Close(); err != nil {
		return c.netErr("close", c.opErr("close", err))
	}
	return nil
}

func (c *sockConn) LocalAddr() net.Addr {
	if a := c.laddr.Load(); a != nil {
		return a
	}
	var sa unix.Sockaddr
	if c.frc.Control(func(fd uintptr) { sa, _ = unix.Getsockname(int(fd)) }) != nil {
		return nil
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return nil
	}
	a := &net.TCPAddr{IP: net.IPv4(in4.Addr[0], in4.Addr[1], in4.Addr[2], in4.Addr[3]).To4(), Port: in4.Port}
	c.laddr.Store(a)
	return a
}

func (c *sockConn) RemoteAddr() net.Addr { return c.raddr }

// setErr is net's error for a deadline that could not be set.
func (c *sockConn) setErr(err error) error {
	if err == nil {
		return nil
	}
	return &net.OpError{Op: "set", Net: "tcp", Addr: c.LocalAddr(), Err: c.opErr("", err)}
}

func (c *sockConn) SetDeadline(t time.Time) error      { return c.setErr(c.f.SetDeadline(t)) }
func (c *sockConn) SetReadDeadline(t time.Time) error  { return c.setErr(c.f.SetReadDeadline(t)) }
func (c *sockConn) SetWriteDeadline(t time.Time) error { return c.setErr(c.f.SetWriteDeadline(t)) }

// SyscallConn is the connection's raw access, with net's errors.
func (c *sockConn) SyscallConn() (syscall.RawConn, error) { return &c.raw, nil }

// sockRaw is a sockConn's syscall.RawConn: its File's, with the errors
// *net.TCPConn's gives ("raw-read", "raw-write", "raw-control").
type sockRaw struct{ c *sockConn }

func (r *sockRaw) Control(f func(uintptr)) error {
	return r.err("raw-control", r.c.frc.Control(f))
}

func (r *sockRaw) Read(f func(uintptr) bool) error { return r.err("raw-read", r.c.frc.Read(f)) }

func (r *sockRaw) Write(f func(uintptr) bool) error { return r.err("raw-write", r.c.frc.Write(f)) }

func (r *sockRaw) err(op string, err error) error {
	if err == nil {
		return nil
	}
	return r.c.netErr(op, r.c.opErr("", err))
}
