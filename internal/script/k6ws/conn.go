package k6ws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// handshakeTimeout bounds a handshake; closeWait how long a socket that
// sent its close frame waits for the server's before it drops the
// connection.
const (
	handshakeTimeout = 60 * time.Second
	closeWait        = 3 * time.Second
)

// params are a connection's params: headers, tags, compression.
type params struct {
	header      http.Header
	tags        sobek.Value
	compression bool
}

// readParams reads a params object; a param throttle does not provide is
// refused by name.
func readParams(v sobek.Value, module string) (params, error) {
	p := params{header: http.Header{}}
	o, ok := v.(*sobek.Object)
	if !ok || sobek.IsNull(v) {
		return p, nil
	}
	for _, k := range o.Keys() {
		val := o.Get(k)
		switch k {
		case "headers":
			if h, ok := val.(*sobek.Object); ok {
				for _, hk := range h.Keys() {
					p.header.Set(hk, h.Get(hk).String())
				}
			}
		case "tags":
			p.tags = val
		case "compression":
			if s := val.String(); s != "deflate" {
				return p, fmt.Errorf("%s: params.compression: want \"deflate\", got %q", module, s)
			}
			p.compression = true
		case "jar":
			return p, fmt.Errorf("%s: params.jar is not supported by throttle", module)
		default:
			return p, fmt.Errorf("%s: unknown param %q (want headers, tags, compression)", module, k)
		}
	}
	return p, nil
}

// conn is one WebSocket connection and what its metrics are tagged with.
type conn struct {
	h     Host
	ws    *websocket.Conn
	url   string
	tags  map[string]string
	began time.Time
	// pings are when the pings still waiting for their pong were sent.
	pings []time.Time
	// killed is set when the connection was dropped on purpose (an abort,
	// a reset loop): the read error that follows is not the server's.
	killed  atomic.Bool
	closing bool
	done    chan struct{} // closed when the session ended
}

// event is what the reading goroutine saw.
type event struct {
	kind   eventKind
	data   []byte
	code   int
	reason string
	err    error
	at     time.Time
}

type eventKind uint8

const (
	evText eventKind = iota
	evBinary
	evPing
	evPong
	evClose // the server's close frame (or the answer to ours)
	evError // the connection failed without a close frame
)

// handshake is a connection's opening handshake as it went.
type handshake struct {
	ws    *websocket.Conn // nil when it failed
	resp  *http.Response
	err   error
	began time.Time
	took  time.Duration
}

// shakeRecovered is shake on the WebSocket's own goroutine: a Go panic
// there (throttle's bug) is recovered as the handshake's error (class
// other), so the socket gets error and close.
func shakeRecovered(ctx context.Context, h Host, u string, p params) (hs handshake) {
	began := time.Now()
	defer func() {
		if hs.err != nil && hs.began.IsZero() {
			hs.began = began
		}
	}()
	defer h.Panics().Recover("a WebSocket handshake", &hs.err)
	protohost.Checkpoint("ws.handshake")
	return shake(ctx, u, p)
}

// shake makes the opening handshake; safe on any goroutine. The end of
// ctx (the phase's abort) cuts it off.
func shake(ctx context.Context, u string, p params) handshake {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	d := websocket.Dialer{HandshakeTimeout: handshakeTimeout, EnableCompression: p.compression, Proxy: http.ProxyFromEnvironment}
	hs := handshake{began: time.Now()}
	hs.ws, hs.resp, hs.err = d.DialContext(ctx, u, p.header)
	hs.took = time.Since(hs.began)
	return hs
}

// open counts a handshake, on the VU's goroutine: ws_connecting, the
// attempt, and (opened) ws_sessions. It returns the connection, or the
// handshake's error.
func open(h Host, u string, p params, hs handshake) (*conn, error) {
	c := &conn{h: h, ws: hs.ws, url: u, began: hs.began, done: make(chan struct{})}
	c.tags = h.Tags(p.tags)
	c.tags["url"] = u
	status := 0
	if hs.resp != nil {
		status = hs.resp.StatusCode
		c.tags["subproto"] = hs.resp.Header.Get("Sec-WebSocket-Protocol")
	}
	c.tags["status"] = strconv.Itoa(status)
	h.Sample("ws_connecting", ms(hs.took), c.tags)
	if hs.err != nil {
		cerr, err := hs.err, hs.err
		if hs.resp != nil {
			cerr = nil // an answer that was not an upgrade: its status classifies it
			err = fmt.Errorf("%w (status %d)", err, status)
		}
		h.Attempt(classOf(cerr, status), hs.took, true)
		return nil, err
	}
	h.Attempt(engine.ClassOK, hs.took, true)
	h.Sample("ws_sessions", 1, c.tags)
	return c, nil
}

// classOf classifies a failed handshake; an answer that is not an error
// status (a 200 from a plain HTTP endpoint) is class other.
func classOf(err error, status int) engine.Class {
	c := engine.ClassOf(err, status)
	if c == engine.ClassOK {
		return engine.ClassOther
	}
	return c
}

// read runs on its own goroutine until the connection ends, passing what
// it sees to post (in order), the last event an evClose or evError. It
// also drops the connection when ctx ends (the VU's phase aborts).
//
// A Go panic in it (throttle's bug) is recovered: the connection is
// dropped and the session ends with an error event of class other.
func (c *conn) read(ctx context.Context, post func(event)) {
	if err := c.readRecovered(ctx, post); err != nil {
		_ = c.ws.Close() // not kill: the drop is a failed attempt the script sees
		post(event{kind: evError, err: err, at: time.Now()})
	}
}

func (c *conn) readRecovered(ctx context.Context, post func(event)) (err error) {
	defer c.h.Panics().Recover("a WebSocket reader", &err)
	c.readLoop(ctx, post)
	return nil
}

func (c *conn) readLoop(ctx context.Context, post func(event)) {
	defer context.AfterFunc(ctx, c.kill)()
	c.ws.SetPingHandler(func(data string) error {
		post(event{kind: evPing, at: time.Now()})
		err := c.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	c.ws.SetPongHandler(func(string) error {
		post(event{kind: evPong, at: time.Now()})
		return nil
	})
	for {
		kind, data, err := c.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				post(event{kind: evClose, code: ce.Code, reason: ce.Text, at: time.Now()})
			} else {
				post(event{kind: evError, err: err, at: time.Now()})
			}
			return
		}
		protohost.Checkpoint("ws.read")
		ev := event{kind: evText, data: data, at: time.Now()}
		if kind == websocket.BinaryMessage {
			ev.kind = evBinary
		}
		post(ev)
	}
}

// kill drops the connection at once.
func (c *conn) kill() {
	c.killed.Store(true)
	_ = c.ws.Close()
}

// send writes one message, an attempt counted in ws_msgs_sent.
func (c *conn) send(kind int, data []byte) error {
	began := time.Now()
	err := c.ws.WriteMessage(kind, data)
	if err != nil {
		c.h.Attempt(classOf(err, 0), time.Since(began), false)
		return err
	}
	c.h.Attempt(engine.ClassOK, time.Since(began), false)
	c.h.Sample("ws_msgs_sent", 1, c.tags)
	return nil
}

// ping sends a ping; its pong gives ws_ping.
func (c *conn) ping() error {
	if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second)); err != nil {
		return err
	}
	c.pings = append(c.pings, time.Now())
	return nil
}

// pong matches a pong to the oldest ping waiting for one.
func (c *conn) pong(at time.Time) {
	if len(c.pings) == 0 {
		return
	}
	c.h.Sample("ws_ping", ms(at.Sub(c.pings[0])), c.tags)
	c.pings = c.pings[1:]
}

// received counts a message in ws_msgs_received.
func (c *conn) received() { c.h.Sample("ws_msgs_received", 1, c.tags) }

// close sends a close frame with code (and reason); the server's answer
// ends the session, or closeWait ends it without one.
func (c *conn) close(code int, reason string) {
	if c.closing {
		return
	}
	c.closing = true
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	_ = c.ws.SetReadDeadline(time.Now().Add(closeWait))
}

// end finishes the session: ws_session_duration, the connection closed.
// A connection dropped without a close frame (not by us) is a failed
// attempt of its error's class. It returns whether the drop was the
// server's doing (an error the script sees).
func (c *conn) end(ev event) (dropped bool) {
	dropped = ev.kind == evError && !c.killed.Load() && !c.closing
	if dropped {
		c.h.Attempt(classOf(ev.err, 0), 0, false)
	}
	_ = c.ws.Close()
	close(c.done)
	c.h.Sample("ws_session_duration", ms(time.Since(c.began)), c.tags)
	return dropped
}

// closeCode is the code a session's close reports: the close frame's, or
// 1006 (abnormal closure) for a connection that ended without one.
func closeCode(ev event) int {
	if ev.kind == evClose {
		return ev.code
	}
	return websocket.CloseAbnormalClosure
}
