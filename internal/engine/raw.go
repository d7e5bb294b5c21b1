package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// The raw transport: plain HTTP/1.1 over one net.Conn per host per runner,
// for a script VU's request lanes (DriverConfig.RawHTTP). A VU sends from
// its own goroutine and Go's netpoller parks it while it waits, so a lane
// is a connection and a few small structs: no fasthttp.HostClient, no
// idle-connection cleaner goroutine, no fasthttp request and response held
// between requests, and a shallower call chain (a smaller goroutine stack
// during the request). Responses are read with h1resp (h1parse.go), the
// event loop's reader, keeping the body; the header block is handed to
// fasthttp's own header parser, so Response.Headers, HeaderValues and the
// redirect's Location read exactly what the fasthttp transport gives.
//
// The wire request is fasthttp's: buildRequest (fast.go) fills a
// fasthttp.Request as the fasthttp transport does and fasthttp writes its
// bytes once per distinct *Request (the runner keeps them, as the fasthttp
// transport keeps its request), so the method, request URI, Host,
// User-Agent, header order and casing are the same byte for byte.
//
// What it does not take goes over a fastConn made on first need, per
// request: https, a URL with user info (fasthttp sends it as
// Authorization), and anything fasthttp's request writer refuses, so those
// keep their exact fasthttp behaviour and errors. (A body on a GET or HEAD
// is not refused: fasthttp writes it with its Content-Length, as net/http
// and k6 send it.)
//
// Invariants: a rawConn is used by its runner's goroutine only; a host's
// conn is nil or idle between attempts, with nothing unread on it (a
// response not read to its end, or followed by bytes nobody asked for,
// closes it).

// rawMaxIdle is how long an idle connection is kept: fasthttp's
// MaxIdleConnDuration in the fasthttp transport. Past it the runner dials
// afresh instead of reusing it.
const rawMaxIdle = 90 * time.Second

// rawBufSize is the read buffer's size: fasthttp's read buffer in the
// fasthttp transport. A header block that fills it is too large there and
// here (errHeaderTooBig).
const rawBufSize = maxHeader

// userAgent is the User-Agent both HTTP/1.1 transports send when the
// request has none (the fasthttp transport's HostClient.Name).
const userAgent = "throttle"

// rawConn is one runner's raw transport.
type rawConn struct {
	s     *fastShared
	hosts []*rawHost // a VU talks to few hosts: a slice, not a map
	fast  *fastConn  // for what the raw transport leaves to fasthttp; nil until needed

	last     *Request // the Request wire was built from
	lastHost *rawHost // nil: last goes over fast
	wire     []byte   // last's request line and headers, and its body unless body is set
	body     []byte   // last's body, written after wire when large; else nil
	reqClose bool     // last asks for Connection: close
	isHead   bool
	retry    bool // last may be resent on a new connection (idempotent)

	p       h1resp
	hp      *headParser // this response's parsed headers, while its body is read
	raw     []byte      // this response's header records (header.go), when kept
	lazy    []byte      // this response's header block, kept unparsed (plainCheck) until its body's end
	loc     string      // this response's Location, for a redirect
	scratch []byte      // keepHeader's
}

// rawHost is a runner's connection to one host:port.
//
// The abort hook is registered once per host, at its first dial, and
// closes whatever connection the host holds when the abort comes: not one
// hook per connection, which cost allocations per dial and a registration
// under the lock of the abort context that every VU shares. conn is
// written by the runner only, under mu; the hook reads it under mu.
type rawHost struct {
	addr string
	// literal: addr's host is an IP address, which no resolver is asked
	// about; a host name is resolved at every dial, as on fasthttp.
	literal bool
	// direct: addr's for connectDirect, which dials it on the runner's
	// goroutine; nil when net's dial does (connectJob).
	direct *directAddr
	mu     sync.Mutex
	conn   net.Conn        // nil when there is none
	rc     syscall.RawConn // conn's, when its reads are stamped (rxStart); else nil
	stop   func() bool     // unregisters the abort hook; nil before the first dial
	idle   time.Time       // when conn last went idle
	// dl is the deadline on conn: put on at its dial, and by an attempt
	// that could not keep it or moved it (rawdeadline.go); zero with no
	// conn.
	dl time.Time
}

func (s *fastShared) newRaw() *rawConn { return &rawConn{s: s} }

// setConn makes conn h's connection (nil: none).
func (h *rawHost) setConn(conn net.Conn) {
	h.mu.Lock()
	h.conn = conn
	h.mu.Unlock()
}

// abort is h's abort hook: it closes h's connection, cutting off the
// attempt that waits on it.
func (h *rawHost) abort() {
	h.mu.Lock()
	if h.conn != nil {
		h.conn.Close()
	}
	h.mu.Unlock()
}

// drop closes h's connection, if any.
func (h *rawHost) drop() {
	if conn := h.conn; conn != nil {
		h.setConn(nil)
		h.rc, h.dl = nil, time.Time{}
		conn.Close()
	}
}

func (c *rawConn) host(addr string) *rawHost {
	for _, h := range c.hosts {
		if h.addr == addr {
			return h
		}
	}
	h := &rawHost{addr: addr}
	ap, err := netip.ParseAddrPort(addr)
	h.literal = err == nil
	if h.literal {
		h.direct = newDirect(ap)
	}
	c.hosts = append(c.hosts, h)
	return h
}

// wireWriter is a bufio.Writer over a buffer, for fasthttp's request
// writer; pooled, as building is rare (once per distinct request).
type wireWriter struct {
	buf bytes.Buffer
	w   *bufio.Writer
}

var wireWriters = sync.Pool{New: func() any {
	ww := &wireWriter{}
	ww.w = bufio.NewWriterSize(&ww.buf, 1024)
	return ww
}}

// build makes r's wire bytes and returns the host they go to, or nil when
// r is one for the fasthttp transport.
func (c *rawConn) build(r *Request) *rawHost {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	isTLS, addr, err := buildRequest(req, r)
	if err != nil || isTLS || len(req.URI().Username()) > 0 {
		return nil
	}
	// What fasthttp's HostClient does to a request before writing it.
	if len(req.Header.UserAgent()) == 0 {
		req.Header.SetUserAgent(userAgent)
	}
	req.URI().DisablePathNormalizing = true
	ww := wireWriters.Get().(*wireWriter)
	defer wireWriters.Put(ww)
	ww.buf.Reset()
	ww.w.Reset(&ww.buf)
	if req.Write(ww.w) != nil || ww.w.Flush() != nil {
		return nil // fasthttp fails it, as it always did
	}
	wire := ww.buf.Bytes()
	c.body = nil
	if n := len(r.Body); n > 512 && bytes.HasSuffix(wire, r.Body) {
		// A large body is written from the Request, not copied.
		c.body, wire = r.Body, wire[:len(wire)-n]
	}
	c.wire = append(c.wire[:0], wire...)
	c.reqClose, c.isHead = req.ConnectionClose(), req.Header.IsHead()
	c.retry = idempotentMethod(string(req.Header.Method()))
	return c.host(addr)
}

// rawTrace is one attempt's marks and bytes. On a stamped connection
// first and last are the kernel's arrival times of the reads that brought
// the answer's first and last bytes (rxstamp_linux.go), and delay is how
// long the first waited to be read; else they are the reads' own times.
// The marks the timings are split at are kept as durations from t0 as
// well (wrote only so): the split is then integer arithmetic, not five
// Time.Sub and four Time.Before, which cost some 150 instructions a
// request (docs/performance.md, "Iteration cost, session 13").
type rawTrace struct {
	t0      time.Time     // the attempt's start
	timeout time.Duration // from t0: its deadline (deadline)
	dialed  bool
	stamped bool // the answer's first read came with a kernel stamp
	connect time.Duration
	wrote   time.Duration // from t0 to the request's last byte written; 0 before
	first   time.Time     // the answer's first byte read; zero before
	last    time.Time     // the answer's last byte read; zero unless it came whole
	firstD  time.Duration // first - t0, once first is set
	lastD   time.Duration // last - t0, once last is set
	delay   time.Duration
	sent    int64
	recv    int64
}

func (c *rawConn) send(r *Request, t0 time.Time, timeout time.Duration, res *Response) time.Time {
	if r != c.last {
		c.last, c.lastHost = r, c.build(r)
	}
	h := c.lastHost
	if h == nil {
		if c.fast == nil {
			c.fast = c.s.newConn()
		}
		return c.fast.send(r, t0, timeout, res)
	}
	var (
		tr  = rawTrace{t0: t0, timeout: timeout}
		err error
	)
	for try := 0; ; try++ {
		if h.conn != nil && t0.Sub(h.idle) > rawMaxIdle {
			h.drop()
		}
		if h.conn == nil {
			if err = c.dial(h, tr.deadline(), &tr); err != nil {
				break
			}
		} else if !h.keepDeadline(t0, timeout) {
			deadline := tr.deadline()
			if err = h.conn.SetDeadline(deadline); err != nil {
				h.drop()
				break
			}
			h.dl = deadline
		}
		var answered bool
		answered, err = c.roundTrip(h, r, &tr)
		// As the fasthttp transport: one resend of an idempotent request
		// whose reused connection the server had closed, before any byte
		// of an answer.
		if err == nil || try > 0 || tr.dialed || answered || !c.retry || !closedErr(err) {
			break
		}
	}
	end, endD := tr.last, tr.lastD // the answer's last byte, when one came whole
	if end.IsZero() {
		end = time.Now()
		endD = end.Sub(t0)
	}
	p := &c.p
	body, raw, loc := p.body, c.raw, c.loc
	// A sleeping VU keeps no body of its last answer, nor its headers.
	p.body, p.trailer, p.room, c.raw, c.loc = nil, nil, nil, nil, ""
	res.BytesSent += tr.sent
	res.BytesReceived += tr.recv
	res.Timings = tr.timings(endD)
	res.rxDelay, res.rxStamped = tr.delay, tr.stamped
	res.location = ""
	if err != nil {
		res.Err = err
		return end
	}
	if h.conn != nil {
		h.idle = end
	}
	res.Status, res.Proto = p.status, "HTTP/1.1"
	if p.http10 {
		res.Proto = "HTTP/1.0"
	}
	res.location = loc
	if !r.DiscardBody || r.KeepHeader {
		res.rawHeader = raw
	}
	if !r.DiscardBody {
		res.Body = body
		if res.Body == nil && !c.isHead && p.status != 204 && p.status != 304 && p.status >= 200 {
			res.Body = []byte{} // a body of no bytes, as fasthttp's stream gives
		}
	}
	return end
}

// closedErr is a reused connection found closed by the server (the
// fasthttp transport's retry condition).
func closedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// roundTrip writes the built request on h's connection and reads its
// response into c.p (and c.raw, c.loc). answered says whether any byte of
// an answer arrived. On an error, or when the connection must not be
// reused, it closes the connection.
func (c *rawConn) roundTrip(h *rawHost, r *Request, tr *rawTrace) (answered bool, err error) {
	err = c.write(h, tr)
	tr.wrote = time.Since(tr.t0)
	if err != nil {
		h.drop()
		return false, err
	}
	// No defer: a panic here replaces the whole transport (safeAttempt),
	// its buffer and parser with it.
	if readHook != nil {
		readHook()
	}
	bp := c.s.bufs.rawBuf()
	var rx *rxRead
	if h.rc != nil {
		rx = bp.rx.on(h.conn, h.rc)
	}
	answered, err = c.readAnswer(h, r, tr, bp.buf, rx)
	if rx != nil {
		rx.off()
	}
	c.releaseHead()
	c.s.bufs.raw.Put(bp)
	return answered, err
}

// readAnswer reads the answer to the request roundTrip wrote into c.p
// (and c.raw, c.loc), with buf as its read buffer; through rx, when not
// nil, with the kernel's stamps.
func (c *rawConn) readAnswer(h *rawHost, r *Request, tr *rawTrace, buf []byte, rx *rxRead) (answered bool, err error) {
	p := &c.p
	p.reset(c.isHead)
	p.keep, p.limit = !r.DiscardBody, c.s.bodyLimit
	p.plain.on = !r.DiscardBody || r.KeepHeader
	c.raw, c.lazy, c.loc = nil, nil, ""
	have := 0
	var stamp int64 // the last read's kernel stamp; 0: none
	for {
		var (
			k    int
			rerr error
		)
		if rx != nil {
			var st int64
			k, st, rerr = rx.Read(buf[have:])
			if k > 0 {
				stamp = st
			}
		} else {
			k, rerr = h.conn.Read(buf[have:])
		}
		firstRead := false
		if k > 0 {
			tr.recv += int64(k)
			if tr.first.IsZero() {
				tr.first, tr.delay = rxAt(stamp, time.Now())
				tr.firstD = tr.first.Sub(tr.t0)
				firstRead, tr.stamped = true, stamp != 0
			}
			if !tr.stamped {
				stamp = 0 // an answer is timed by the kernel throughout, or not at all
			}
			answered = true
		}
		have += k
		used, done, perr := p.feed(buf[:have])
		if p.headBlock != nil {
			if perr == nil {
				perr = c.keepHead(r, p.headBlock)
			}
			p.headBlock = nil
		}
		if perr != nil {
			h.drop()
			return answered, perr
		}
		if done {
			perr = c.keepHeaders(r)
		}
		if perr != nil {
			h.drop()
			return answered, perr
		}
		if done {
			// The answer's last byte came in this read. When that is the
			// read that brought its first, the one reading is both
			// instants (receiving 0), as the event loop has them.
			tr.last, tr.lastD = tr.first, tr.firstD
			if !firstRead {
				tr.last, _ = rxAt(stamp, time.Now())
				tr.lastD = tr.last.Sub(tr.t0)
			}
			if used < have || p.close || c.reqClose || p.status == 101 {
				h.drop() // bytes nobody asked for, or the connection ends here
			}
			return answered, nil
		}
		copy(buf, buf[used:have])
		have -= used
		switch {
		case rerr == io.EOF:
			h.drop()
			if !answered {
				return false, fasthttp.ErrConnectionClosed
			}
			if done, err := p.eof(); !done {
				return true, err
			}
			if stamp != 0 {
				// The body ended at the close: its last byte came with
				// the last read that brought any.
				tr.last, _ = rxAt(stamp, time.Now())
				tr.lastD = tr.last.Sub(tr.t0)
			}
			return true, c.keepHeaders(r)
		case rerr != nil && h.moved(rerr, tr):
			// An earlier deadline kept on the connection: read again.
		case rerr != nil:
			h.drop()
			return answered, rerr
		case have == len(buf):
			h.drop()
			return answered, errHeaderTooBig
		}
	}
}

// headParser parses a header block with fasthttp's response header
// reader, so the headers kept are the fasthttp transport's.
type headParser struct {
	h  fasthttp.ResponseHeader
	rd bytes.Reader
	br *bufio.Reader
}

// headParserBuf is a pooled parser's buffer: most header blocks fit; a
// larger one gets a reader of its size (reader).
const headParserBuf = 4 << 10

var headParsers = sync.Pool{New: func() any {
	hp := &headParser{}
	hp.br = bufio.NewReaderSize(&hp.rd, headParserBuf)
	return hp
}}

// reader is a reader of b, whole in its buffer as fasthttp's parser
// needs.
func (hp *headParser) reader(b []byte) *bufio.Reader {
	hp.rd.Reset(b)
	if len(b) > hp.br.Size() {
		return bufio.NewReaderSize(&hp.rd, len(b))
	}
	hp.br.Reset(&hp.rd)
	return hp.br
}

// keepHead parses the final response's header block when the request
// keeps its headers (then held in c.hp until the body's end, for a
// trailer) or it is a redirect (its Location). A kept block that
// fasthttp's reader is sure to take (plainCheck) is not parsed: it is kept
// as it came, in c.lazy, and parsed if the headers are ever read.
func (c *rawConn) keepHead(r *Request, block []byte) error {
	keep, redirect := !r.DiscardBody || r.KeepHeader, isRedirect(c.p.status)
	if !keep && !redirect {
		return nil
	}
	if !redirect && c.p.plain.ok {
		c.lazy = lazyHeader(block, c.p.plain.cookie, c.p.room)
		return nil
	}
	hp, err := parseHead(block)
	if err == nil && redirect {
		c.loc = string(hp.h.Peek("Location"))
	}
	if err != nil || !keep {
		headParsers.Put(hp)
		return err
	}
	c.hp = hp
	return nil
}

// keepHeaders makes the kept headers' records (header.go) at the body's
// end. A trailer is parsed, as the fasthttp transport parses it (a
// malformed one fails the same way), but its fields are not kept. A lazy
// block is the headers as they are, unless a trailer came: then it is
// parsed now, as keepHead would have, for the trailer's parse.
func (c *rawConn) keepHeaders(r *Request) error {
	if c.lazy != nil {
		lazy := c.lazy
		c.lazy = nil
		if len(c.p.trailer) == 0 {
			c.raw = lazy
			return nil
		}
		hp, err := parseHead(lazy[1:])
		if err != nil { // not so: plainCheck's blocks parse
			headParsers.Put(hp)
			return err
		}
		c.hp = hp
	}
	if c.hp == nil {
		return nil
	}
	hp := c.hp
	if t := c.p.trailer; len(t) > 0 {
		if err := hp.h.ReadTrailer(hp.reader(t)); err != nil {
			return err
		}
	}
	c.raw, c.scratch = keepHeader(&hp.h, c.scratch)
	return nil
}

// parseHead parses a response's header block with a pooled parser, which
// the caller puts back.
func parseHead(block []byte) (*headParser, error) {
	hp := headParsers.Get().(*headParser)
	hp.h.Reset()
	hp.h.SetNoDefaultContentType(true) // keepHeader's: only a Content-Type sent
	return hp, hp.h.Read(hp.reader(block))
}

func (c *rawConn) releaseHead() {
	c.lazy = nil
	if c.hp != nil {
		headParsers.Put(c.hp)
		c.hp = nil
	}
}

// timings splits the attempt from t0 to endD after it at the trace's
// marks, as the fasthttp transport does: a dialled connection's connect
// time first. It is Timings.split of the marks as instants, with
// rxWrote's rule, on their durations from t0.
func (tr *rawTrace) timings(endD time.Duration) Timings {
	var t Timings
	var start time.Duration
	if tr.dialed {
		t.Connecting = tr.connect
		start = tr.connect
	}
	wrote, first, end := tr.wrote, tr.firstD, endD
	if tr.stamped && first < wrote {
		wrote = start // rxWrote: the answer came before the writer's clock reading
	}
	if wrote < start {
		wrote = start
	}
	if tr.first.IsZero() || first < wrote {
		first = wrote
	}
	if end < first {
		end = first
	}
	t.Sending, t.Waiting, t.Receiving = wrote-start, first-wrote, end-first
	t.Duration = t.Sending + t.Waiting + t.Receiving
	return t
}

func (c *rawConn) close() {
	for _, h := range c.hosts {
		h.drop()
		if h.stop != nil {
			h.stop()
		}
	}
	if c.fast != nil {
		c.fast.close()
		c.fast = nil
	}
}
