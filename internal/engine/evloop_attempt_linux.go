//go:build linux

package engine

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/throttlekit/throttle/internal/phase"
)

// One slot's attempt on the event loop (evloop_linux.go has the loop):
// dialling, writing the request, reading the answer (h1parse.go), and
// judging, counting and ending it as the Runner does.
// attempt starts s's next try at now.
func (l *evLoop) attempt(s *evSlot, now time.Time) {
	s.try++
	if s.try > 1 {
		s.start = now
	}
	s.res.reset()
	s.res.Tries = s.try
	l.sh.m.started.Add(1)
	s.sent, s.deadline = now, now.Add(l.sh.timeout)
	s.dialed, s.resent, s.connect = false, false, 0
	s.wrote, s.first, s.lastAt, s.sentN, s.recvN = time.Time{}, time.Time{}, time.Time{}, 0, 0
	l.arm(s.deadline)
	if attemptHook != nil {
		attemptHook(&l.e.reqs[s.target])
	}
	l.send(s, now)
}

// send writes the request on s's connection, dialling one first if s has
// none.
func (l *evLoop) send(s *evSlot, now time.Time) {
	s.woff = 0
	s.p.reset(l.sh.head[s.target])
	s.pend = s.pend[:0]
	if s.fd < 0 {
		l.dial(s, now)
		return
	}
	l.write(s, now)
}

func (l *evLoop) dial(s *evSlot, now time.Time) {
	s.dialed, s.reused, s.connStart = true, false, now
	fd, err := unix.Socket(l.sh.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		l.fail(s, now, err)
		return
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	if l.rxOn {
		rxEnable(fd) // refused: its reads come unstamped, timed as before
	}
	s.fd = fd
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: int32(s.idx + 1)}); err != nil {
		l.fail(s, now, err)
		return
	}
	s.interestWrite = true
	err = unix.Connect(fd, l.addr)
	switch err {
	case nil:
		l.connected(s, now)
	case unix.EINPROGRESS:
		s.state = slotConnecting
	default:
		l.fail(s, now, dialErr(err))
	}
}

// dialErr is a failed connect as net's dialer reports it, so classify and
// errorCode treat it as the fasthttp transport's.
func dialErr(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Op: "connect", Err: err}}
}

func (l *evLoop) connected(s *evSlot, now time.Time) {
	s.connect = now.Sub(s.connStart)
	l.write(s, now)
}

func (l *evLoop) write(s *evSlot, now time.Time) {
	req := l.sh.reqs[s.target]
	for s.woff < len(req) {
		n, err := rawWrite(s.fd, req[s.woff:])
		if n > 0 {
			s.woff += n
			s.sentN += int64(n)
		}
		if err == unix.EAGAIN {
			s.state = slotSending
			l.interest(s, true)
			return
		}
		if err != nil {
			l.broken(s, now, err)
			return
		}
	}
	s.wrote = time.Now()
	s.state = slotReading
	l.interest(s, false)
}

// interest sets whether s waits for its connection to be writable.
func (l *evLoop) interest(s *evSlot, write bool) {
	if s.interestWrite == write {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(s.idx + 1)}
	if write {
		ev.Events |= unix.EPOLLOUT
	}
	unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, s.fd, &ev)
	s.interestWrite = write
}

// event handles epoll's report on s's connection.
func (l *evLoop) event(s *evSlot, ev uint32, now time.Time) {
	switch s.state {
	case slotConnecting:
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		if e, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || e != 0 {
			if err == nil {
				err = unix.Errno(e)
			}
			l.fail(s, now, dialErr(err))
			return
		}
		l.connected(s, now)
	case slotSending:
		l.write(s, now)
	case slotReading:
		l.read(s, now)
	default:
		// An idle keep-alive connection spoke: the server closed it (or
		// sent what no request asked for). It is dropped; the next attempt
		// dials anew.
		if s.fd >= 0 {
			l.closeConn(s)
		}
	}
}

// read reads what s's connection has. now is the loop's reading at its
// epoll_wait's return: the read's time, unless the connection is stamped;
// then an answer's first and last bytes are timed at their arrivals
// (rxAt), and the first's wait for the loop, up to the read itself, is
// the answer's read delay.
func (l *evLoop) read(s *evSlot, now time.Time) {
	var (
		n     int
		stamp int64
		err   error
	)
	if readHook != nil {
		readHook()
	}
	if l.rxOn {
		n, stamp, err = l.rx.recv(s.fd, l.buf)
	} else {
		n, err = rawRead(s.fd, l.buf)
	}
	if err == unix.EAGAIN {
		return
	}
	if n > 0 {
		at := now
		switch {
		case stamp == 0:
		case s.first.IsZero():
			// The read's own time, not the batch's: slots before s in
			// this batch kept its answer waiting too.
			at, s.res.rxDelay = rxAt(stamp, time.Now())
			s.res.rxStamped, s.lastAt = true, at
		case s.res.rxStamped: // an answer is timed by the kernel throughout, or not at all
			at, _ = rxAt(stamp, time.Now())
			s.lastAt = at
		}
		if s.first.IsZero() {
			s.first = at
		}
		s.recvN += int64(n)
		data := l.buf[:n]
		if len(s.pend) > 0 {
			s.pend = append(s.pend, data...)
			data = s.pend
		}
		used, done, perr := s.p.feed(data)
		if perr != nil {
			l.fail(s, now, perr)
			return
		}
		if done {
			s.pend = append(s.pend[:0], data[used:]...)
			l.answered(s, at)
			return
		}
		s.pend = append(s.pend[:0], data[used:]...)
		return
	}
	if n == 0 && err == nil {
		if done, perr := s.p.eof(); done {
			end := now
			if !s.lastAt.IsZero() {
				end = s.lastAt // the body's last byte, not the close after it
			}
			l.answered(s, end)
			return
		} else if s.recvN == 0 {
			l.broken(s, now, io.EOF)
		} else {
			l.fail(s, now, perr)
		}
		return
	}
	l.broken(s, now, err)
}

// broken is a connection that failed before the response's first byte: a
// reused one the server had closed is dialled again and the request resent
// once; else the attempt fails with err.
func (l *evLoop) broken(s *evSlot, now time.Time, err error) {
	if s.reused && !s.dialed && !s.resent && s.recvN == 0 && l.sh.idempotent[s.target] {
		l.closeConn(s)
		s.resent = true
		s.sentN = 0
		l.send(s, now)
		return
	}
	l.fail(s, now, err)
}

// answered ends an attempt whose response is whole.
func (l *evLoop) answered(s *evSlot, now time.Time) {
	s.res.Status = s.p.status
	s.res.Proto = "HTTP/1.1"
	if s.p.http10 {
		s.res.Proto = "HTTP/1.0"
	}
	if s.p.close {
		l.closeConn(s)
	} else {
		s.reused = true
	}
	l.resolve(s, now)
}

// fail ends s's attempt with err; the connection is closed.
func (l *evLoop) fail(s *evSlot, now time.Time, err error) {
	l.closeConn(s)
	s.res.Err = err
	l.resolve(s, now)
}

// resolve judges and counts the attempt that ended at end, then backs off
// for the next try or ends the iteration.
func (l *evLoop) resolve(s *evSlot, end time.Time) {
	res := &s.res
	res.Elapsed = end.Sub(s.sent)
	res.BytesSent, res.BytesReceived = s.sentN, s.recvN
	sendStart := s.sent
	if s.dialed {
		res.Timings.Connecting = s.connect
		sendStart = sendStart.Add(s.connect)
	}
	res.Timings.split(sendStart, rxWrote(s.wrote, s.first, res.rxStamped), s.first, end)
	l.sh.d.judge(res)
	l.settle(s, end)
}

// settle counts s's judged attempt that ended at end, then backs off for
// the next try or ends the iteration.
func (l *evLoop) settle(s *evSlot, end time.Time) {
	res, d := &s.res, l.sh.d
	d.resolve(res, end.Sub(s.start))
	if !res.Failed {
		l.endIteration(s, IterationOK)
		return
	}
	if s.try >= d.cfg.Tries || isClosed(l.lane.Stopping()) {
		l.endIteration(s, IterationFailed)
		return
	}
	b := BackoffBase << min(s.try-1, 16)
	if b > BackoffCap || b <= 0 {
		b = BackoffCap
	}
	s.state, s.deadline = slotBackoff, end.Add(b/2+rand.N(b/2+1))
	l.arm(s.deadline)
}

// endIteration counts s's iteration, ends its Ticket and idles s; its next
// target is the one after.
func (l *evLoop) endIteration(s *evSlot, out Outcome) {
	m := l.sh.m
	m.EndIteration(out)
	m.inflight.Add(-1)
	l.lane.End(s.ticket)
	s.ticket, s.held, s.state = phase.Ticket{}, false, slotIdle
	if l.lane.Open() {
		l.lane.Free()
		s.idleSince = time.Now()
		l.arm(s.idleSince.Add(openIdleClose))
	}
	if s.target++; s.target == len(l.sh.reqs) {
		s.target = 0
	}
}
