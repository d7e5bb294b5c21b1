package engine

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// feedAll feeds raw to a parser in pieces of size step (keeping what it
// did not consume, as the loop does) and then, if eof, the connection's
// close. It returns the parser, whether the response was whole, the bytes
// left after it, and the error.
func feedAll(raw string, step int, head, eof bool) (*h1resp, bool, string, error) {
	var p h1resp
	p.reset(head)
	var pend []byte
	for i := 0; i < len(raw); i += step {
		pend = append(pend, raw[i:min(i+step, len(raw))]...)
		n, done, err := p.feed(pend)
		pend = pend[n:]
		if err != nil || done {
			rest := string(pend) + raw[min(i+step, len(raw)):]
			return &p, done, rest, err
		}
	}
	if eof {
		done, err := p.eof()
		return &p, done, "", err
	}
	return &p, false, string(pend), nil
}

// A response is read the same whole or a byte at a time: its status, its
// framing, where it ends (bytes after it are left), and its errors, which
// classify as the fasthttp transport's do.
func TestH1Parse(t *testing.T) {
	for _, c := range []struct {
		name, raw  string
		head, eof  bool
		status     int
		close      bool
		rest       string
		class      Class // for an error; ClassOK for none
		incomplete bool
	}{
		{name: "length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", status: 200, rest: "NEXT"},
		{name: "zero length", raw: "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", status: 404},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\na\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n", status: 200},
		{name: "http/1.0 close-delimited", raw: "HTTP/1.0 200 OK\r\n\r\nbody until close", eof: true, status: 200, close: true},
		{name: "http/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", status: 200},
		{name: "connection close", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", status: 200, close: true},
		{name: "interim answers", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", status: 201},
		{name: "head ignores the length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", head: true, status: 200},
		{name: "no content", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "malformed status", raw: "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok", class: ClassOther},
		{name: "not http", raw: "SSH-2.0-OpenSSH_9.6\r\n", class: ClassOther},
		{name: "bad chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n", class: ClassOther},
		{name: "bad length", raw: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", class: ClassOther},
		{name: "cut off after the status line", raw: "HTTP/1.1 200 OK\r\n", eof: true, class: ClassReset},
		{name: "cut off body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", eof: true, class: ClassReset},
		{name: "header too large", raw: "HTTP/1.1 200 OK\r\nX-Huge: " + strings.Repeat("a", maxHeader), class: ClassOther},
		{name: "interim answers without end", raw: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxHeader/20), class: ClassOther},
		{name: "waiting for the body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", incomplete: true},
	} {
		for _, step := range []int{1, 7, len(c.raw)} {
			p, done, rest, err := feedAll(c.raw, step, c.head, c.eof)
			switch {
			case c.class != ClassOK:
				if err == nil {
					t.Errorf("%s (step %d): no error", c.name, step)
				} else if got := errClass(err); got != c.class {
					t.Errorf("%s (step %d): %v is class %v, want %v", c.name, step, err, got, c.class)
				}
			case err != nil:
				t.Errorf("%s (step %d): %v", c.name, step, err)
			case c.incomplete:
				if done {
					t.Errorf("%s (step %d): done before the body's end", c.name, step)
				}
			case !done || p.status != c.status || p.close != c.close || rest != c.rest:
				t.Errorf("%s (step %d): done %v status %d close %v rest %q, want %d %v %q", c.name, step, done, p.status, p.close, rest, c.status, c.close, c.rest)
			}
		}
	}
	if _, err := (&h1resp{state: h1Body, left: 1}).eof(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a body cut off: %v", err)
	}
}
