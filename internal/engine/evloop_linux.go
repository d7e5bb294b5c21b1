//go:build linux

package engine

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/throttlekit/throttle/internal/phase"
)

// The event-loop transport (evloop.go decides when it runs; the attempt
// itself is in evloop_attempt_linux.go). Each loop (phase.Loop, one per P
// but one) owns its slots — a slot is one worker with one keep-alive
// connection — on one
// goroutine and one epoll instance, so a request costs a write(2), a
// read(2) and a share of one epoll_wait(2), with no goroutine parked or
// woken per request: the cost the fasthttp transport pays through Go's
// netpoller (docs/performance.md).
//
// It keeps the Runner's promises: every attempt counts once into the Meter
// (started, then judged by Driver.judge and counted by Driver.resolve, or
// aborted); the timings are the attempt's (connecting, sending to the
// last byte written, waiting to the first read, receiving to the last);
// the timeout bounds the attempt from its start, connecting included;
// tries back off as Runner.backoff does, and a stopping phase starts no
// new try; a reused connection the server had closed before answering is
// dialled again and the request resent once (as the fasthttp transport's
// RetryIfErr does) — a fresh one is not. Invariants of a slot: it holds a
// Ticket exactly while it runs an iteration; its fd is open exactly while
// it has a connection, registered with the loop's epoll instance under
// the slot's index + 1 (0 is the wake eventfd).

// slotState is where a slot's iteration is.
type slotState uint8

const (
	slotIdle       slotState = iota // no iteration: waits for Lane.Begin
	slotConnecting                  // a non-blocking connect in progress
	slotSending                     // the request partly written
	slotReading                     // the response being read
	slotBackoff                     // between tries
)

type evSlot struct {
	idx    int
	state  slotState
	fd     int // -1: no connection
	ticket phase.Ticket
	held   bool // ticket is an iteration's: between begin and endIteration
	begun  bool // the slot began an iteration once (its staggered start is past)
	target int  // the next target, round-robin

	try           int
	start, sent   time.Time // the attempt's latency origin and its start
	deadline      time.Time // the attempt's timeout, or the backoff's end
	connStart     time.Time
	connect       time.Duration
	dialed        bool // this attempt dialled its connection
	reused        bool // the connection carried a response before
	resent        bool // this attempt resent on a new connection already
	wrote, first  time.Time
	lastAt        time.Time // the arrival of the last stamped read; zero: none
	sentN, recvN  int64
	woff          int // bytes of the request written
	p             h1resp
	pend          []byte // response bytes not yet consumed
	res           Response
	interestWrite bool
	idleSince     time.Time // open loop: when its last iteration ended
}

// openIdleClose is how long an open-loop slot's connection may stay
// unused before the loop closes it: the span after which an open loop's
// goroutine workers retire (phase.RetireTicks watch ticks). The slot stays
// (a few words; the scheduler may count it free) and dials again when an
// arrival next takes it, so a latency stall's extra slots do not keep
// their connections, and the server's, for the rest of the run.
const openIdleClose = phase.RetireTicks * phase.DefaultWatchEvery

type evLoop struct {
	e     *Engine
	sh    *evShared
	ep    int
	efd   int
	addr  unix.Sockaddr // the target's, this loop's own
	slots []*evSlot
	buf   []byte
	evs   []unix.EpollEvent
	lane  *phase.Lane
	next  time.Time // the earliest slot deadline, or zero
	cur   *evSlot   // the slot being worked on, for a panic's recovery
	// backlog: open-loop arrivals taken whose slot was not idle yet.
	backlog []time.Time
	seed    int  // the first target of the next slot
	rawWait bool // wait with waitRaw (claimRawWait)
	// rxOn: connections are stamped and read through rx, so an answer's
	// times are the kernel's (rxstamp_linux.go).
	rxOn bool
	rx   rxReader
}

func newEvLoop(e *Engine, id int) (phase.Loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		unix.Close(ep)
		unix.Close(efd)
		return nil, err
	}
	return &evLoop{e: e, sh: e.ev, addr: e.ev.sockaddr(), ep: ep, efd: efd, buf: make([]byte, 64<<10), evs: make([]unix.EpollEvent, 256), seed: id, rawWait: claimRawWait(), rxOn: rxStampOn()}, nil
}

func (l *evLoop) wake() {
	one := [8]byte{1}
	unix.Write(l.efd, one[:])
}

// Run implements phase.Loop.
func (l *evLoop) Run(lane *phase.Lane) {
	l.lane = lane
	lane.OnWake(l.wake)
	stopHook := context.AfterFunc(lane.Hard(), l.wake)
	defer stopHook()
	for !l.runRecovered() {
	}
}

// runRecovered runs the loop until it ends (true), or until a Go panic
// (throttle's bug) broke it (false): the attempt of the slot it was
// working on fails, class other, as the fasthttp transport's
// safeAttempt fails one, its connection in an unknown state is closed,
// and the loop goes on.
func (l *evLoop) runRecovered() (done bool) {
	var err error
	defer func() {
		if err == nil {
			return
		}
		if s := l.cur; s != nil && s.held && s.state != slotBackoff {
			l.closeConn(s)
			end := time.Now()
			s.res.Err, s.res.Status, s.res.Proto = err, 0, ""
			s.res.Elapsed = end.Sub(s.sent)
			s.res.Class, s.res.ErrorCode, s.res.Failed = ClassOther, ErrorGeneric, true
			l.settle(s, end)
		}
		l.cur = nil
	}()
	defer l.e.panics.Recover("a request", &err)
	l.loop()
	return true
}

func (l *evLoop) loop() {
	lane := l.lane
	open := lane.Open()
	refusedAt := false
	for {
		now := time.Now()
		if lane.Hard().Err() != nil {
			l.abortAll()
			return
		}
		stopping := isClosed(lane.Stopping())
		var dues []time.Time
		if open {
			dues = append(l.backlog, lane.Take()...) // taken before grow: a due handed with a new slot finds it
			l.backlog = l.backlog[:0]
		}
		if !stopping {
			l.grow()
		}
		refusedAt = false
		busy, again := false, false
		if open {
			again = l.arrivals(dues, now)
		}
		for _, s := range l.slots {
			switch s.state {
			case slotIdle:
				if refusedAt || stopping || open {
					continue
				}
				if !s.begun {
					// A worker the governor added starts at its staggered
					// instant (phase.Lane.Due).
					if due := lane.Due(s.idx); now.Before(due) {
						l.arm(due)
						continue
					}
				}
				t, ok := lane.Begin()
				if !ok {
					refusedAt = true
					continue
				}
				l.cur = s
				l.begin(s, t, now, time.Time{})
				again = again || s.state == slotIdle
			case slotBackoff:
				if stopping {
					l.endIteration(s, IterationFailed)
					continue
				}
				if !now.Before(s.deadline) {
					l.cur = s
					l.attempt(s, now)
					again = again || s.state == slotIdle
				}
			}
			if s.state != slotIdle {
				busy = true
			}
			l.cur = nil
		}
		if stopping && !busy && (!open || (len(l.backlog) == 0 && !lane.Pending())) {
			return
		}
		wait := -1 // ms; -1: until an event or a wake
		if !l.next.IsZero() {
			wait = max(int((l.next.Sub(now)+time.Millisecond-1)/time.Millisecond), 0)
		}
		if refusedAt && (wait < 0 || wait > int(phase.LoopRetry/time.Millisecond)) {
			wait = max(int(phase.LoopRetry/time.Millisecond), 1)
		}
		if again && !stopping {
			wait = 0 // an iteration ended at once (a refused connect): begin the next
		}
		// What is ready now first, without waiting (pollNow); only with
		// nothing ready does the loop wait — in open loop, telling the
		// scheduler first, then looking once more for an arrival.
		n := pollNow(l.ep, l.evs)
		if n == 0 && wait != 0 {
			if open {
				lane.Sleeping(true)
				if lane.Pending() {
					wait = 0
				}
			}
			if l.rawWait {
				n = waitRaw(l.ep, l.evs, wait)
			} else {
				var err error
				if n, err = unix.EpollWait(l.ep, l.evs, wait); err != nil {
					n = 0
				}
			}
			if open {
				lane.Sleeping(false)
			}
		}
		now = time.Now()
		for _, ev := range l.evs[:max(n, 0)] {
			if ev.Fd == 0 {
				var b [8]byte
				unix.Read(l.efd, b[:])
				continue
			}
			s := l.slots[ev.Fd-1]
			l.cur = s
			l.event(s, ev.Events, now)
			l.cur = nil
		}
		if !l.next.IsZero() && !now.Before(l.next) {
			l.expire(now)
		}
	}
}

// grow makes the slots the lane wants.
func (l *evLoop) grow() {
	want := l.lane.Want()
	if want <= len(l.slots) {
		return
	}
	n := want - len(l.slots)
	for range n {
		l.slots = append(l.slots, &evSlot{idx: len(l.slots), fd: -1, target: l.seed % len(l.e.reqs)})
		l.seed++
	}
	l.lane.Grew(n)
}

// arrivals begins the open loop's arrivals on idle slots, each timed
// from its due instant; a stopping phase drops them (Lane.BeginDue). It
// reports whether an iteration ended at once.
func (l *evLoop) arrivals(dues []time.Time, now time.Time) (again bool) {
	i := 0
	for _, s := range l.slots {
		if i == len(dues) {
			break
		}
		if s.state != slotIdle || s.held {
			continue
		}
		due := dues[i]
		i++
		t, ok := l.lane.BeginDue(due)
		if !ok {
			continue // dropped: the phase is stopping
		}
		l.cur = s
		l.begin(s, t, now, due)
		l.cur = nil
		again = again || s.state == slotIdle
	}
	// Every arrival came with a slot (one reported free, or one more to
	// make); one whose slot is not idle yet waits for the next pass.
	l.backlog = append(l.backlog, dues[i:]...)
	return again
}

// begin starts an iteration on s: its first attempt, now; its latency
// runs from due (zero: now).
func (l *evLoop) begin(s *evSlot, t phase.Ticket, now, due time.Time) {
	s.ticket, s.held, s.begun = t, true, true
	l.sh.m.inflight.Add(1)
	s.try, s.start = 0, now
	if !due.IsZero() {
		s.start = due
	}
	l.attempt(s, now)
}

// arm notes a deadline the loop must wake for.
func (l *evLoop) arm(t time.Time) {
	if t.IsZero() {
		return
	}
	if l.next.IsZero() || t.Before(l.next) {
		l.next = t
	}
}

// expire fails the attempts past their deadline (class timeout) and
// starts the tries whose backoff ended; it recomputes the next deadline.
func (l *evLoop) expire(now time.Time) {
	l.next = time.Time{}
	for _, s := range l.slots {
		l.cur = s
		switch s.state {
		case slotConnecting, slotSending, slotReading:
			if !now.Before(s.deadline) {
				l.fail(s, now, errAttemptTimeout)
			}
		case slotBackoff:
			if !now.Before(s.deadline) {
				if isClosed(l.lane.Stopping()) {
					l.endIteration(s, IterationFailed)
				} else {
					l.attempt(s, now)
				}
			}
		}
		switch {
		case s.state != slotIdle:
			l.arm(s.deadline)
		case !s.begun:
			l.arm(l.lane.Due(s.idx))
		case s.fd >= 0 && !s.idleSince.IsZero():
			if close := s.idleSince.Add(openIdleClose); now.Before(close) {
				l.arm(close)
			} else {
				l.closeConn(s)
			}
		}
	}
	l.cur = nil
}

// abortAll cuts off every iteration in flight: an attempt on the wire is
// counted aborted; one between tries ends failed, as Runner.backoff does.
func (l *evLoop) abortAll() {
	m := l.sh.m
	if l.lane.Open() {
		for range append(l.backlog, l.lane.Take()...) {
			l.lane.Drop() // handed over, never begun
		}
		l.backlog = l.backlog[:0]
	}
	for _, s := range l.slots {
		switch s.state {
		case slotIdle:
			continue
		case slotBackoff:
			l.endIteration(s, IterationFailed)
		default:
			l.closeConn(s)
			m.aborted.Add(1)
			l.endIteration(s, IterationAborted)
		}
	}
}

func (l *evLoop) closeConn(s *evSlot) {
	if s.fd >= 0 {
		unix.Close(s.fd) // leaves the epoll set with its last descriptor
		s.fd = -1
	}
	s.reused, s.interestWrite = false, false
	s.pend = s.pend[:0]
}

// Close implements phase.Loop.
func (l *evLoop) Close() {
	for _, s := range l.slots {
		l.closeConn(s)
	}
	unix.Close(l.ep)
	unix.Close(l.efd)
	if l.rawWait {
		releaseRawWait()
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// evLoopSupported: epoll is here.
const evLoopSupported = true

// sockaddr is the target's address for one loop: unix.Connect caches
// its raw form in it, so loops do not share one.
func (sh *evShared) sockaddr() unix.Sockaddr {
	if a := sh.ap.Addr().Unmap(); a.Is4() {
		return &unix.SockaddrInet4{Port: int(sh.ap.Port()), Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: int(sh.ap.Port()), Addr: sh.ap.Addr().As16()}
}

// evShared is what every loop of an engine reads: the address, the wire
// requests (one per target), the settings.
type evShared struct {
	d          *Driver
	m          *Meter
	family     int
	ap         netip.AddrPort
	reqs       [][]byte
	head       []bool // the target's method is HEAD: no body
	idempotent []bool
	timeout    time.Duration
}

func newEvShared(e *Engine, ap netip.AddrPort) *evShared {
	sh := &evShared{d: e.driver, m: e.meter, timeout: e.driver.cfg.Timeout}
	sh.ap, sh.family = ap, unix.AF_INET6
	if ap.Addr().Unmap().Is4() {
		sh.family = unix.AF_INET
	}
	for _, t := range e.cfg.Targets {
		sh.reqs = append(sh.reqs, wireRequest(t))
		sh.head = append(sh.head, t.Method == http.MethodHead)
		sh.idempotent = append(sh.idempotent, idempotentMethod(t.Method))
	}
	return sh
}
