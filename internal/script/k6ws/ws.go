package k6ws

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"
)

// NewWS is k6/ws in one VU: connect.
func NewWS(h Host) *sobek.Object {
	o := h.Runtime().NewObject()
	_ = o.Set("connect", func(call sobek.FunctionCall) sobek.Value { return connect(h, call) })
	return o
}

// wsEvents are the events a k6/ws socket's on() takes.
var wsEvents = []string{"open", "message", "binaryMessage", "ping", "pong", "close", "error"}

// session is one k6/ws connection while ws.connect runs it: its handlers,
// timers, and the queue of what its goroutines hand the VU's.
type session struct {
	h        Host
	rt       *sobek.Runtime
	c        *conn
	handlers map[string][]sobek.Callable
	queue    chan func() error
	ended    bool
}

// connect is ws.connect(url[, params], callback): it opens the socket,
// calls callback with it, then runs the socket's events and timers on the
// VU's goroutine until it closes, and returns the handshake's response.
func connect(h Host, call sobek.FunctionCall) sobek.Value {
	rt := h.Runtime()
	u, pv, fv := call.Argument(0).String(), call.Argument(1), call.Argument(2)
	if len(call.Arguments) == 2 {
		pv, fv = sobek.Undefined(), call.Argument(1)
	}
	fn, ok := sobek.AssertFunction(fv)
	if !ok {
		throw(rt, errors.New("ws.connect(url, params, callback): the callback must be a function"))
	}
	if h.InInit() {
		throw(rt, errors.New("ws.connect cannot be called in the init context"))
	}
	p, err := readParams(pv, "k6/ws")
	if err != nil {
		throw(rt, err)
	}
	hs := shake(h.Context(), u, p)
	c, err := open(h, u, p, hs)
	if err != nil {
		throw(rt, fmt.Errorf("ws.connect %s: %w", u, err))
	}
	s := &session{h: h, rt: rt, c: c, handlers: map[string][]sobek.Callable{}, queue: make(chan func() error, 16)}
	go c.read(h.Context(), func(ev event) {
		select {
		case s.queue <- func() error { return s.handle(ev) }:
		case <-c.done:
		}
	})
	if _, err := fn(sobek.Undefined(), s.object()); err != nil {
		s.abandon()
		panic(err)
	}
	if err := s.emit("open"); err != nil {
		s.abandon()
		panic(err)
	}
	for !s.ended {
		if err := (<-s.queue)(); err != nil {
			s.abandon()
			panic(err)
		}
	}
	return responseObject(rt, u, hs.resp)
}

// responseObject is ws.connect's Response: url, status, headers, body,
// error.
func responseObject(rt *sobek.Runtime, u string, resp *http.Response) *sobek.Object {
	o := rt.NewObject()
	h := rt.NewObject()
	for k, vs := range resp.Header {
		_ = h.Set(k, strings.Join(vs, ", "))
	}
	_ = o.Set("url", u)
	_ = o.Set("status", resp.StatusCode)
	_ = o.Set("headers", h)
	_ = o.Set("body", "")
	_ = o.Set("error", "")
	return o
}

// object is the Socket the callback gets.
func (s *session) object() *sobek.Object {
	rt := s.rt
	o := rt.NewObject()
	set := func(k string, f any) { _ = o.Set(k, f) }
	set("on", func(name string, fn sobek.Value) {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			throw(rt, fmt.Errorf("socket.on(%q, handler): the handler must be a function", name))
		}
		known := false
		for _, e := range wsEvents {
			known = known || e == name
		}
		if !known {
			throw(rt, fmt.Errorf("socket.on: unknown event %q (want %s)", name, strings.Join(wsEvents, ", ")))
		}
		s.handlers[name] = append(s.handlers[name], f)
	})
	set("send", func(data sobek.Value) {
		s.write(websocket.TextMessage, []byte(data.String()))
	})
	set("sendBinary", func(data sobek.Value) {
		if _, ok := data.Export().(sobek.ArrayBuffer); !ok {
			throw(rt, errors.New("socket.sendBinary: want an ArrayBuffer"))
		}
		s.write(websocket.BinaryMessage, s.h.Bytes(data))
	})
	set("ping", func() {
		if s.ended || s.c.closing {
			return
		}
		if err := s.c.ping(); err != nil {
			s.fail(err)
		}
	})
	set("close", func(code sobek.Value) {
		n := websocket.CloseNormalClosure
		if code != nil && !sobek.IsUndefined(code) {
			n = int(code.ToInteger())
		}
		if !s.ended {
			s.c.close(n, "")
		}
	})
	set("setTimeout", func(fn sobek.Value, msec float64) { s.timer(fn, msec, false) })
	set("setInterval", func(fn sobek.Value, msec float64) { s.timer(fn, msec, true) })
	return o
}

// write sends a message unless the socket is closing; a failed write is
// the socket's error event.
func (s *session) write(kind int, data []byte) {
	if s.ended || s.c.closing {
		return
	}
	if err := s.c.send(kind, data); err != nil {
		s.fail(err)
	}
}

// fail reports err to the error handlers and drops the connection; the
// reading goroutine's error then ends the session.
func (s *session) fail(err error) {
	_ = s.emit("error", s.errorObject(err))
	s.c.kill()
}

func (s *session) errorObject(err error) *sobek.Object {
	o := s.rt.NewObject()
	msg := err.Error()
	_ = o.Set("error", func() string { return msg })
	return o
}

// timer is socket.setTimeout and socket.setInterval: fn runs on the VU's
// goroutine while the socket is open.
func (s *session) timer(fv sobek.Value, msec float64, every bool) {
	fn, ok := sobek.AssertFunction(fv)
	if !ok {
		throw(s.rt, errors.New("socket timer: the handler must be a function"))
	}
	d := time.Duration(max(msec, 0) * float64(time.Millisecond))
	if every {
		d = max(d, time.Millisecond)
	}
	var fire func()
	fire = func() {
		select {
		case s.queue <- func() error {
			if s.ended {
				return nil
			}
			if every {
				time.AfterFunc(d, fire)
			}
			_, err := fn(sobek.Undefined())
			return err
		}:
		case <-s.c.done:
		}
	}
	time.AfterFunc(d, fire)
}

// handle runs one event from the reading goroutine.
func (s *session) handle(ev event) error {
	switch ev.kind {
	case evText:
		s.c.received()
		return s.emit("message", s.rt.ToValue(string(ev.data)))
	case evBinary:
		s.c.received()
		return s.emit("binaryMessage", s.rt.ToValue(s.rt.NewArrayBuffer(ev.data)))
	case evPing:
		return s.emit("ping")
	case evPong:
		s.c.pong(ev.at)
		return s.emit("pong")
	}
	return s.finish(ev)
}

// abandon ends the session when the script threw: the connection is
// dropped and no more handlers run.
func (s *session) abandon() {
	if s.ended {
		return
	}
	s.ended = true
	s.c.kill()
	s.c.end(event{kind: evError})
}

// finish ends the session: the error handlers for a dropped connection,
// then the close handlers with the close code.
func (s *session) finish(ev event) error {
	s.ended = true
	if s.c.end(ev) {
		if err := s.emit("error", s.errorObject(ev.err)); err != nil {
			return err
		}
	}
	return s.emit("close", s.rt.ToValue(closeCode(ev)))
}

// emit calls the handlers of an event in the order they were added.
func (s *session) emit(name string, args ...sobek.Value) error {
	for _, f := range s.handlers[name] {
		if _, err := f(sobek.Undefined(), args...); err != nil {
			return err
		}
	}
	return nil
}
