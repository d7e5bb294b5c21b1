//go:build linux

package engine

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The answer's arrival from the kernel. With SO_TIMESTAMPNS set on a TCP
// socket, Linux stamps every received segment on its way in
// (CLOCK_REALTIME, the clock time.Now's wall reading is) and recvmsg
// hands back, in a control message, the stamp of the last segment whose
// bytes it returned (tcp_recv_timestamp). A read's stamp is then when its
// bytes reached this machine, whatever the generator did meanwhile: a VU
// whose goroutine ran late, or a loop busy with other slots, read the
// answer later than it came, and user-space timings counted that wait as
// the target's. The raw transport (raw.go) and the event loop
// (evloop_attempt_linux.go) end waiting and receiving at the stamps, and
// count the gap (the read delay) apart (Meter.ReadDelay).
//
// Checked on loopback on Linux 6.18 (docs/performance.md, "The answer's
// arrival from the kernel"): the stamp is a few µs after the server's
// write and never after the reader's time.Now; on a kept-alive connection
// each read carries its own answer's stamp; a read returning several
// segments carries the newest one's.
//
// Invariant: a stamp is used only through rxAt, which places it on the
// reader's monotonic clock and never more than rxAhead after the reading
// it is compared with, so a wall-clock step cannot make a read delay
// negative or move an instant far.

// RxStampEnv turns the kernel's receive stamps off with "0" (then every
// timing is user space, as on the other transports); "1" or unset keeps
// them on.
const RxStampEnv = "THROTTLE_RXSTAMP"

// rxStampSupported: this system has the stamps.
const rxStampSupported = true

// rxStampOn reports whether new connections are stamped (RxStampEnv).
func rxStampOn() bool { return os.Getenv(RxStampEnv) != "0" }

var rxKey sync.Once

// rxKeyOn keeps one socket asking for receive stamps open for the
// process's life. The kernel stamps received packets only while some
// socket asks (a static key), and the first socket's asking turns it on
// in deferred work (net_enable_timestamp): a connection's first answer
// could come before, unstamped (seen in TestEvLoopTimingsFromKernel), and
// so could the first after every stamped connection had closed. The cost
// is the kernel's: a clock reading per packet received while it is on.
func rxKeyOn() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if rxAsk(fd) != nil {
		unix.Close(fd)
	}
}

// rxEnable asks the kernel to stamp fd's received segments; the first
// call keeps the kernel's stamping on for the process's life (rxKeyOn).
func rxEnable(fd int) error {
	rxKey.Do(rxKeyOn)
	return rxAsk(fd)
}

func rxAsk(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// rxCmsgLen is one SCM_TIMESTAMPNS control message's space.
var rxCmsgLen = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

// rxReader reads with recvmsg into a reused message header, iovec and
// control buffer: no allocation per read. Not safe for concurrent use.
type rxReader struct {
	msg unix.Msghdr
	iov unix.Iovec
	oob [64]byte // room for one timestamp message (32 bytes on 64-bit)
}

// recv reads into p from the non-blocking fd once, as a raw system call
// (it never waits). stamp is the kernel's receive time of the bytes, in
// Unix nanoseconds, or 0 when none came with them.
func (r *rxReader) recv(fd int, p []byte) (n int, stamp int64, err error) {
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.msg.Iov = &r.iov
	r.msg.Iovlen = 1
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	r.msg.Flags = 0
	k, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&r.msg)), 0)
	r.iov.Base = nil // holds no buffer between reads
	if e != 0 {
		return -1, 0, e
	}
	if int(r.msg.Controllen) >= rxCmsgLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&r.oob[0]))
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS {
			ts := (*unix.Timespec)(unsafe.Pointer(&r.oob[unix.CmsgLen(0)]))
			stamp = ts.Nano()
		}
	}
	return int(k), stamp, nil
}

// rxAhead is how far after the user-space reading it is placed against
// a stamp may be taken as it is: the event loop reads with the clock
// reading of its epoll_wait's return, and a read later in that batch may
// bring bytes that came after it. A stamp further ahead is a clock step.
const rxAhead = 100 * time.Millisecond

// rxAt places bytes stamped at stamp (Unix ns, 0: none) on user's clock:
// at is when they arrived, delay how long they waited before user (never
// negative). at is user.Add(-delay), or after user by at most rxAhead,
// so it keeps user's monotonic reading; with no stamp (or a clock step)
// it is user itself.
func rxAt(stamp int64, user time.Time) (at time.Time, delay time.Duration) {
	if stamp == 0 {
		return user, 0
	}
	d := time.Duration(user.UnixNano() - stamp)
	if d < 0 {
		if d < -rxAhead {
			return user, 0
		}
		return user.Add(-d), 0
	}
	return user.Add(-d), d
}

// rxWrote is the request's last-byte mark for an answer whose first byte
// came at first: wrote, the clock reading after the write returned,
// unless the answer came before it — the writer was held between its
// write and its clock reading (a generator short of CPU, or the peer
// answering on another core while this goroutine waited for one) — then
// zero, which Timings.split takes as the send's start: the request was
// whole on the wire by the answer's arrival, and the hold after it is
// the generator's, so it is counted in neither Sending nor Waiting.
func rxWrote(wrote, first time.Time, stamped bool) time.Time {
	if stamped && first.Before(wrote) {
		return time.Time{}
	}
	return wrote
}

// rxStart asks the kernel to stamp conn's received segments and returns
// the RawConn its stamped reads go through (rxRead.on), or nil when conn
// cannot be stamped: then it is read as before, with conn.Read and
// user-space times. One per connection; the reading state is pooled
// (rawReadBuf), so an idle VU's connection holds no more than this.
func rxStart(conn net.Conn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = rxEnable(int(fd)) }); err != nil || serr != nil {
		return nil
	}
	return rc
}

// rxRead reads one answer's bytes from a net.Conn with recvmsg through
// its syscall.RawConn, so a read waits in Go's poller under the conn's
// deadline as conn.Read does, and fails with conn.Read's errors ("read",
// not "raw-read"). It lives in a pooled rawReadBuf (bufpool.go), beside
// the read buffer, and is bound to a connection for one answer (on, off):
// a VU asleep holds none.
type rxRead struct {
	rd    rxReader
	conn  net.Conn
	rc    syscall.RawConn
	fn    func(uintptr) bool // read, bound once (init)
	p     []byte
	n     int
	stamp int64
	errno error
}

func (r *rxRead) init() { r.fn = r.read }

// on binds r to conn, whose RawConn rxStart made, and returns it.
func (r *rxRead) on(conn net.Conn, rc syscall.RawConn) *rxRead {
	r.conn, r.rc = conn, rc
	return r
}

// off unbinds r.
func (r *rxRead) off() { r.conn, r.rc, r.errno = nil, nil, nil }

func (r *rxRead) read(fd uintptr) bool {
	for {
		n, stamp, err := r.rd.recv(int(fd), r.p)
		switch err {
		case nil:
			raceIO(int(fd))
			r.n, r.stamp, r.errno = n, stamp, nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		r.n, r.stamp, r.errno = 0, 0, err
		return true
	}
}

// Read is conn.Read, with the stamp of the bytes read (0: none).
func (r *rxRead) Read(p []byte) (n int, stamp int64, err error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	r.p = p
	err = r.rc.Read(r.fn)
	r.p = nil
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "raw-read" {
			op.Op = "read"
		}
		return 0, 0, err
	}
	if r.errno != nil {
		return 0, 0, &net.OpError{Op: "read", Net: "tcp", Source: r.conn.LocalAddr(), Addr: r.conn.RemoteAddr(),
			Err: os.NewSyscallError("read", r.errno)}
	}
	if r.n == 0 {
		return 0, 0, io.EOF
	}
	return r.n, r.stamp, nil
}
