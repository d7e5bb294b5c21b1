package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// h1resp reads one HTTP/1.x response as its bytes arrive, for the event
// loop transport (evloop_linux.go), which has no bufio.Reader to block on:
// feed takes what a read returned and says how much it used and whether
// the response is whole. The body is never kept: its bytes are counted and
// dropped. It takes what fasthttp takes — a status line and headers within
// maxHeader bytes, 1xx interim answers skipped, a body framed by
// Content-Length, chunked transfer coding or the connection's close — and
// fails what fasthttp fails with an error classify puts in the same class:
// a malformed answer is class other, an answer cut off is class reset
// (io.ErrUnexpectedEOF).
//
// The raw transport (raw.go) reads with it too, and keeps what the loop
// drops: with keep set, feed appends the body's bytes (without chunk
// framing) to body, failing with ErrBodyTooLarge past limit, and headBlock is
// the final response's status line and headers (CRLF CRLF included) as a
// slice of the bytes last fed, valid until the caller changes them;
// trailer is a chunked body's trailer block, if it has one.
//
// Invariants: feed never consumes past the response's end (bytes after it
// stay the caller's); after done or an error, reset before the next
// response.
type h1resp struct {
	head   bool // the request was HEAD: no body whatever the headers say
	state  h1state
	status int
	http10 bool
	close  bool  // the connection ends after this response
	left   int64 // body bytes left in the current length or chunk
	chunk  bool  // chunked body
	hdrLen int   // header bytes seen so far (the limit's count)

	keep      bool   // keep the body in body (the raw transport)
	limit     int64  // the most body bytes kept
	body      []byte // the body so far, when keep
	headBlock []byte // the final response's header block, once read
	trailer   []byte // a chunked body's trailer lines (with the empty one), when keep
	// plain, when on, checks each header block as it is read (header.go);
	// plain.ok then says whether the final one is plain.
	plain plainCheck
	room  []byte // room for the final block's lazy copy, allocated with its body
}

type h1state uint8

const (
	h1Head       h1state = iota // the status line and headers
	h1Body                      // a Content-Length body: left bytes to go
	h1UntilClose                // a body the connection's close ends
	h1ChunkSize                 // a chunk-size line
	h1ChunkData                 // left bytes of chunk data
	h1ChunkCRLF                 // the CRLF after a chunk's data
	h1Trailer                   // trailer lines, up to the empty one
	h1Done
)

// maxHeader bounds a response's status line and headers, as fasthttp's
// read buffer does for the default transport.
const maxHeader = 16 << 10

var (
	errMalformed     = errors.New("malformed HTTP response")
	errHeaderTooBig  = errors.New("response header too large")
	errBadChunk      = errors.New("malformed chunked body")
	errBadLength     = errors.New("malformed Content-Length")
	errNoHTTPVersion = errors.New("not an HTTP/1.x response")
)

func (p *h1resp) reset(head bool) { *p = h1resp{head: head} }

// take keeps b, a piece of the body, when the body is kept.
func (p *h1resp) take(b []byte) error {
	if !p.keep {
		return nil
	}
	if int64(len(p.body)+len(b)) > p.limit {
		return errBodyLimit(p.limit)
	}
	p.body = append(p.body, b...)
	return nil
}

// errBodyLimit is ErrBodyTooLarge as both transports word it.
func errBodyLimit(limit int64) error {
	return fmt.Errorf("%w (%d bytes)", ErrBodyTooLarge, limit)
}

// feed consumes b from the start; n is how much it used. done is true once
// the response is whole. A header not yet whole is not consumed: the
// caller keeps it and feeds it again with more bytes after it.
func (p *h1resp) feed(b []byte) (n int, done bool, err error) {
	for n < len(b) || p.state == h1Done {
		switch p.state {
		case h1Done:
			return n, true, nil
		case h1Head:
			end, fast := p.fastHead(b[n:]) // h1fast.go: the common form, in one pass
			if !fast {
				end = bytes.Index(b[n:], []byte("\r\n\r\n"))
				if end < 0 {
					if p.hdrLen+len(b)-n > maxHeader {
						return n, false, errHeaderTooBig
					}
					if len(b)-n >= 5 && !bytes.HasPrefix(b[n:], []byte("HTTP/")) {
						return n, false, errNoHTTPVersion
					}
					return n, false, nil // wait for the rest
				}
				if p.hdrLen+end+4 > maxHeader {
					return n, false, errHeaderTooBig
				}
				if err := p.header(b[n : n+end+2]); err != nil {
					return n, false, err
				}
			}
			n += end + 4
			if p.status < 200 && p.status != 101 {
				p.hdrLen += end + 4 // an interim answer: the real one follows
				p.state = h1Head
				continue
			}
			p.hdrLen, p.headBlock = 0, b[n-end-4:n]
		case h1Body, h1ChunkData:
			k := int64(len(b) - n)
			if k > p.left {
				k = p.left
			}
			if err := p.take(b[n : n+int(k)]); err != nil {
				return n, false, err
			}
			n += int(k)
			if p.left -= k; p.left == 0 {
				if p.state == h1Body {
					p.state = h1Done
				} else {
					p.state = h1ChunkCRLF
				}
			}
		case h1UntilClose:
			if err := p.take(b[n:]); err != nil {
				return n, false, err
			}
			n = len(b)
		case h1ChunkCRLF:
			if len(b)-n < 2 {
				if b[n] != '\r' {
					return n, false, errBadChunk
				}
				return n, false, nil
			}
			if b[n] != '\r' || b[n+1] != '\n' {
				return n, false, errBadChunk
			}
			n += 2
			p.state = h1ChunkSize
		case h1ChunkSize, h1Trailer:
			eol := bytes.IndexByte(b[n:], '\n')
			if eol < 0 {
				if len(b)-n > 4096 {
					return n, false, errBadChunk
				}
				return n, false, nil
			}
			line := bytes.TrimSuffix(b[n:n+eol], []byte("\r"))
			if p.state == h1Trailer {
				if p.keep && (len(line) > 0 || len(p.trailer) > 0) {
					p.trailer = append(p.trailer, b[n:n+eol+1]...)
				}
				n += eol + 1
				if len(line) == 0 {
					p.state = h1Done
				}
				continue
			}
			n += eol + 1
			size, ok := parseHex(line)
			if !ok {
				return n, false, errBadChunk
			}
			if size == 0 {
				p.state = h1Trailer
				continue
			}
			p.left, p.state = size, h1ChunkData
		}
	}
	return n, p.state == h1Done, nil
}

// header parses the status line and headers (h ends with the last header
// line's CRLF) and sets the body's framing.
func (p *h1resp) header(h []byte) error {
	eol := bytes.IndexByte(h, '\n')
	line := bytes.TrimSuffix(h[:eol], []byte("\r"))
	if p.plain.on {
		p.plain.status(line, len(line) < eol)
	}
	switch {
	case bytes.HasPrefix(line, []byte("HTTP/1.1 ")):
	case bytes.HasPrefix(line, []byte("HTTP/1.0 ")):
		p.http10 = true
	default:
		return errNoHTTPVersion
	}
	if len(line) < 12 || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("%w: status line %q", errMalformed, trimQuote(line))
	}
	p.status = 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: status line %q", errMalformed, trimQuote(line))
		}
		p.status = p.status*10 + int(c-'0')
	}
	if p.status < 100 {
		return fmt.Errorf("%w: status %d", errMalformed, p.status)
	}
	length, keepAlive := int64(-1), false
	p.chunk, p.close = false, false
	for rest := h[eol+1:]; len(rest) > 0; {
		eol := bytes.IndexByte(rest, '\n')
		if eol < 0 {
			eol = len(rest)
		}
		line := bytes.TrimSuffix(rest[:eol], []byte("\r"))
		cr := len(line) < eol
		rest = rest[min(eol+1, len(rest)):]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return fmt.Errorf("%w: header line %q", errMalformed, trimQuote(line))
		}
		if p.plain.ok {
			p.plain.line(line[:colon], line[colon+1:], cr)
		}
		name := line[:colon]
		// bytes.EqualFold does not compare lengths first: a name of
		// another length is not one of these, and is not compared.
		switch len(name) {
		case len("Content-Length"), len("Transfer-Encoding"), len("Connection"):
		default:
			continue
		}
		value := bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseDec(value)
			if !ok || (length >= 0 && n != length) {
				return errBadLength
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if bytes.EqualFold(value, []byte("chunked")) {
				p.chunk = true
			} else if !bytes.EqualFold(value, []byte("identity")) {
				return fmt.Errorf("%w: transfer coding %q", errMalformed, trimQuote(value))
			}
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				p.close = true
			} else if bytes.EqualFold(value, []byte("keep-alive")) {
				keepAlive = true
			}
		}
	}
	p.frame(length, keepAlive, len(h)+2)
	return nil
}

// frame sets the body's framing once a head of hlen bytes (its CRLF CRLF
// included) is read: length is its Content-Length (-1 for none), keepAlive
// whether it said Connection: keep-alive; the status, chunk and close are
// set.
func (p *h1resp) frame(length int64, keepAlive bool, hlen int) {
	if p.http10 && !keepAlive {
		p.close = true
	}
	switch {
	case p.status < 200 && p.status != 101:
		p.state = h1Head
	case p.head || p.status == 204 || p.status == 304:
		p.state = h1Done
	case p.chunk:
		p.state = h1ChunkSize
	case length >= 0:
		p.left, p.state = length, h1Body
		if length == 0 {
			p.state = h1Done
		}
		if p.keep && length > 0 && length <= p.limit {
			// The announced length: one buffer of that size, after the
			// room for a plain header block's copy (lazyHeader), which
			// then costs no allocation of its own.
			room := 0
			if p.plain.ok {
				room = lazyLen(hlen)
			}
			buf := make([]byte, room, room+int(length))
			p.room, p.body = buf, buf[room:]
		}
	default:
		p.state, p.close = h1UntilClose, true
	}
}

// eof is the connection's end while the response is read: it ends a body
// delimited by the close, and cuts off any other.
func (p *h1resp) eof() (done bool, err error) {
	switch p.state {
	case h1UntilClose, h1Done:
		p.state = h1Done
		return true, nil
	}
	return false, io.ErrUnexpectedEOF
}

func parseDec(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseHex reads a chunk-size line: hex digits, then optional extensions.
func parseHex(b []byte) (int64, bool) {
	if i := bytes.IndexByte(b, ';'); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimRight(b, " \t")
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

func trimQuote(b []byte) []byte { return b[:min(len(b), 64)] }
