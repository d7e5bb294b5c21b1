package k6ws

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/grafana/sobek"
)

// The readyState values, by their constants' names.
var readyStates = []string{"CONNECTING", "OPEN", "CLOSING", "CLOSED"}

const (
	stateConnecting = iota
	stateOpen
	stateClosing
	stateClosed
)

// browserEvents are the events addEventListener and the on* properties
// take.
var browserEvents = []string{"open", "message", "error", "close", "ping", "pong"}

// NewWebSockets is k6/websockets (and k6/experimental/websockets) in one
// VU: the WebSocket and Blob constructors.
func NewWebSockets(h Host) *sobek.Object {
	rt := h.Runtime()
	o := rt.NewObject()
	b := &blobs{rt: rt, key: sobek.NewSymbol("blob")}
	ctor := rt.ToValue(func(call sobek.ConstructorCall) *sobek.Object {
		newSocket(h, b, call)
		return nil
	}).(*sobek.Object)
	for i, n := range readyStates {
		_ = ctor.Set(n, i)
	}
	_ = o.Set("WebSocket", ctor)
	_ = o.Set("Blob", b.constructor())
	return o
}

// socket is one browser-style WebSocket. Its fields are the VU
// goroutine's, but raw, which an event loop reset may need to drop.
type socket struct {
	h          Host
	rt         *sobek.Runtime
	blobs      *blobs
	obj        *sobek.Object
	url        string
	state      int
	binaryType string
	listeners  map[string][]sobek.Callable
	hold       Hold
	c          *conn
	raw        atomic.Pointer[websocket.Conn]
	// closeAsked is close()'s code and reason while still connecting.
	closeAsked  bool
	closeCode   int
	closeReason string
}

// newSocket is `new WebSocket(url, protocols, params)`: the handshake
// starts at once, on its own goroutine; the socket's events arrive on the
// VU's event loop.
func newSocket(h Host, b *blobs, call sobek.ConstructorCall) {
	rt := h.Runtime()
	if h.InInit() {
		throw(rt, errors.New("k6/websockets: a WebSocket cannot be opened in the init context"))
	}
	u := call.Argument(0).String()
	if pr := call.Argument(1); !sobek.IsUndefined(pr) && !sobek.IsNull(pr) {
		throw(rt, errors.New("k6/websockets: WebSocket's protocols argument is not supported by throttle (pass null)"))
	}
	p, err := readParams(call.Argument(2), "k6/websockets")
	if err != nil {
		throw(rt, err)
	}
	s := &socket{h: h, rt: rt, blobs: b, obj: call.This, url: u, binaryType: "blob", listeners: map[string][]sobek.Callable{}}
	s.define()
	s.hold = h.Hold(func() {
		if ws := s.raw.Load(); ws != nil {
			_ = ws.Close()
		}
	})
	ctx := h.Context()
	go func() {
		hs := shakeRecovered(ctx, h, u, p)
		if hs.ws != nil {
			s.raw.Store(hs.ws)
		}
		s.hold.Post(func() error { return s.opened(hs, p) })
	}()
}

// define gives the script's object its properties and methods.
func (s *socket) define() {
	rt, o := s.rt, s.obj
	get := func(name string, f func() any) {
		_ = o.DefineAccessorProperty(name, rt.ToValue(f), nil, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	}
	get("url", func() any { return s.url })
	get("readyState", func() any { return s.state })
	// Writes are made whole before send returns: nothing is ever buffered.
	get("bufferedAmount", func() any { return 0 })
	_ = o.DefineAccessorProperty("binaryType", rt.ToValue(func() string { return s.binaryType }),
		rt.ToValue(func(v string) {
			if v != "blob" && v != "arraybuffer" {
				throw(rt, fmt.Errorf("WebSocket.binaryType: want \"blob\" or \"arraybuffer\", got %q", v))
			}
			s.binaryType = v
		}), sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	for i, n := range readyStates {
		_ = o.Set(n, i)
	}
	for _, e := range browserEvents {
		_ = o.Set("on"+e, sobek.Null())
	}
	_ = o.Set("addEventListener", func(name string, fn sobek.Value) {
		f, ok := sobek.AssertFunction(fn)
		if !ok {
			throw(rt, fmt.Errorf("WebSocket.addEventListener(%q, listener): the listener must be a function", name))
		}
		if !known(name) {
			throw(rt, fmt.Errorf("WebSocket.addEventListener: unknown event %q (want %s)", name, strings.Join(browserEvents, ", ")))
		}
		s.listeners[name] = append(s.listeners[name], f)
	})
	_ = o.Set("send", s.send)
	_ = o.Set("ping", func() {
		if s.state != stateOpen {
			throw(rt, errors.New("WebSocket.ping: InvalidStateError: the WebSocket is not open"))
		}
		if err := s.c.ping(); err != nil {
			s.fail(err)
		}
	})
	_ = o.Set("close", func(code, reason sobek.Value) {
		n := websocket.CloseNormalClosure
		if code != nil && !sobek.IsUndefined(code) {
			n = int(code.ToInteger())
		}
		why := ""
		if reason != nil && !sobek.IsUndefined(reason) {
			why = reason.String()
		}
		switch s.state {
		case stateConnecting:
			s.closeAsked, s.closeCode, s.closeReason = true, n, why
		case stateOpen:
			s.state = stateClosing
			s.c.close(n, why)
		}
	})
}

func known(name string) bool {
	for _, e := range browserEvents {
		if e == name {
			return true
		}
	}
	return false
}

// send is WebSocket.send: a string is a text message; an ArrayBuffer, a
// typed array or a Blob a binary one.
func (s *socket) send(data sobek.Value) {
	if s.state != stateOpen {
		throw(s.rt, errors.New("WebSocket.send: InvalidStateError: the WebSocket is not open"))
	}
	kind, b := websocket.TextMessage, []byte(nil)
	if bl := s.blobs.of(data); bl != nil {
		kind, b = websocket.BinaryMessage, bl.data
	} else if o, ok := data.(*sobek.Object); ok && (o.Get("byteLength") != nil || o.Get("buffer") != nil) {
		kind, b = websocket.BinaryMessage, s.h.Bytes(data)
	} else {
		b = []byte(data.String())
	}
	if err := s.c.send(kind, b); err != nil {
		s.fail(err)
	}
}

// fail drops the connection after a failed write; the reading
// goroutine's error then reports it and closes the socket.
func (s *socket) fail(err error) {
	_ = s.dispatch("error", s.errorEvent(err))
	s.c.kill()
}

// opened runs when the handshake ended.
func (s *socket) opened(hs handshake, p params) error {
	c, err := open(s.h, s.url, p, hs)
	if err != nil {
		s.state = stateClosed
		s.hold.Release()
		if err := s.dispatch("error", s.errorEvent(err)); err != nil {
			return err
		}
		return s.dispatch("close", s.closeEvent(websocket.CloseAbnormalClosure, "", false))
	}
	s.c, s.state = c, stateOpen
	go c.read(s.h.Context(), func(ev event) { s.hold.Post(func() error { return s.handle(ev) }) })
	if err := s.dispatch("open", s.event("open")); err != nil {
		return err
	}
	if s.closeAsked && s.state == stateOpen {
		s.state = stateClosing
		c.close(s.closeCode, s.closeReason)
	}
	return nil
}

// handle runs one event from the reading goroutine.
func (s *socket) handle(ev event) error {
	switch ev.kind {
	case evText, evBinary:
		s.c.received()
		e := s.event("message")
		var data sobek.Value
		switch {
		case ev.kind == evText:
			data = s.rt.ToValue(string(ev.data))
		case s.binaryType == "arraybuffer":
			data = s.rt.ToValue(s.rt.NewArrayBuffer(ev.data))
		default:
			data = s.blobs.make(ev.data, "")
		}
		_ = e.Set("data", data)
		_ = e.Set("origin", s.url)
		return s.dispatch("message", e)
	case evPing:
		return s.dispatch("ping", s.event("ping"))
	case evPong:
		s.c.pong(ev.at)
		return s.dispatch("pong", s.event("pong"))
	}
	s.state = stateClosed
	s.hold.Release()
	if s.c.end(ev) {
		if err := s.dispatch("error", s.errorEvent(ev.err)); err != nil {
			return err
		}
	}
	return s.dispatch("close", s.closeEvent(closeCode(ev), ev.reason, ev.kind == evClose))
}

// event is an Event of type name, targeting the socket.
func (s *socket) event(name string) *sobek.Object {
	e := s.rt.NewObject()
	_ = e.Set("type", name)
	_ = e.Set("target", s.obj)
	_ = e.Set("timestamp", time.Now().UnixMilli())
	return e
}

func (s *socket) errorEvent(err error) *sobek.Object {
	e := s.event("error")
	_ = e.Set("error", err.Error())
	return e
}

func (s *socket) closeEvent(code int, reason string, clean bool) *sobek.Object {
	e := s.event("close")
	_ = e.Set("code", code)
	_ = e.Set("reason", reason)
	_ = e.Set("wasClean", clean)
	return e
}

// dispatch calls the on<name> handler, then the listeners in the order
// they were added.
func (s *socket) dispatch(name string, e *sobek.Object) error {
	if f, ok := sobek.AssertFunction(s.obj.Get("on" + name)); ok {
		if _, err := f(s.obj, e); err != nil {
			return err
		}
	}
	for _, f := range s.listeners[name] {
		if _, err := f(s.obj, e); err != nil {
			return err
		}
	}
	return nil
}
