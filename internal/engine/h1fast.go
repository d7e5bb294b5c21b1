package engine

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// A response head in its common form is read in one pass (fastHead): a
// status line "HTTP/1.1 ddd reason" or "HTTP/1.0 …" and header lines
// "token-name:value" of printable bytes, every line ended by CRLF. For
// such a head h1resp.header, with its search for CRLF CRLF, its IndexByte
// per line and per colon and plainCheck's own passes, read every byte
// four or five times; here each is read once, eight at a time, and the
// line ends fall out of the value scan. It was a quarter of a script
// request's own work in the raw transport (about 2 800 instructions for
// the built-in target's three header lines).
//
// The fast path gives exactly what the general path gives for the heads
// it takes (TestFastHeadLikeGeneral: the seeds of the plain-head tests,
// mutations of them, fed whole and in pieces), and takes no head it is not
// sure of: a tab or a byte of 0x80 and above in a value that matters to
// the framing, a line end without CR, a name byte other than a token's, a
// head not yet whole, a Content-Length or Transfer-Encoding the general
// path fails. Those heads go through h1resp.header, as before.

// crlf is "\r\n" read as a little-endian uint16.
const crlf = '\n'<<8 | '\r'

// fastHeadOff turns the fast path off (tests compare the two paths).
var fastHeadOff bool

// Words of the two status line starts the fast path takes.
var (
	http11Word = binary.LittleEndian.Uint64([]byte("HTTP/1.1"))
	http10Word = binary.LittleEndian.Uint64([]byte("HTTP/1.0"))
)

// fastHead reads the head at the start of b when it is whole and in the
// common form, sets what h1resp.header sets for it (the status, the
// framing, the plain check's verdict) and returns the index of its
// terminating CRLF CRLF, as bytes.Index would find it. ok false: b was
// not read and p is as it was.
func (p *h1resp) fastHead(b []byte) (end int, ok bool) {
	if fastHeadOff || len(b) < 16 || b[8] != ' ' {
		return 0, false
	}
	w := binary.LittleEndian.Uint64(b)
	if w != http11Word && w != http10Word {
		return 0, false
	}
	d0, d1, d2 := b[9]-'0', b[10]-'0', b[11]-'0'
	if d0 > 9 || d1 > 9 || d2 > 9 || d0 == 0 {
		return 0, false
	}
	status := int(d0)*100 + int(d1)*10 + int(d2)
	i := 12
	if b[12] == ' ' {
		i = 13 + valueScan(b[13:])
	}
	if len(b)-i < 2 || binary.LittleEndian.Uint16(b[i:]) != crlf {
		return 0, false
	}
	i += 2
	length, fl := int64(-1), headFlags(0)
	if p.plain.on {
		fl = hfPlain
	}
	for {
		if len(b)-i < 2 {
			return 0, false
		}
		if binary.LittleEndian.Uint16(b[i:]) == crlf {
			end = i - 2
			break
		}
		// the name: token bytes up to the colon
		j := nameScan(b, i)
		if j == i || j >= len(b) || b[j] != ':' {
			return 0, false
		}
		k := j + 1 + valueScan(b[j+1:])
		if len(b)-k < 2 || binary.LittleEndian.Uint16(b[k:]) != crlf {
			return 0, false
		}
		switch j - i {
		case len(hdrContentLength):
			if !lowerIs(b[i:j], "content-length") {
				break
			}
			n, ok := contentLength(b[j+1 : k])
			if !ok || length >= 0 && n != length {
				return 0, false // the general path's errBadLength, or a case too rare to read here
			}
			length = n
			if fl&hfPlain != 0 {
				// plainCheck: at most once, 1-18 digits (parseDec's own rule)
				if fl&hfLength != 0 {
					fl &^= hfPlain
				}
				fl |= hfLength
			}
		case len(hdrTrailer), len(setCookie), len(hdrTransferEncoding):
			if !fl.special(b[i:j], b[j+1:k]) {
				return 0, false
			}
		}
		i = k + 2
	}
	if p.hdrLen+end+4 > maxHeader {
		return 0, false // the general path's errHeaderTooBig
	}
	p.status = status
	if w == http10Word {
		p.http10 = true
	}
	p.chunk, p.close = fl&hfChunk != 0, fl&hfClose != 0
	p.plain = plainCheck{on: p.plain.on, ok: fl&hfPlain != 0, cookie: fl&hfCookie != 0, length: fl&hfLength != 0, te: fl&hfTE != 0}
	p.frame(length, fl&hfKeepAlive != 0, end+4)
	return end, true
}

// headFlags are what fastHead learns of a head's lines besides its
// Content-Length: the framing's (chunked, close, keep-alive) and the plain
// check's (still plain; a Set-Cookie, a Content-Length, a
// Transfer-Encoding line seen while plain). One byte, so that the loop
// keeps them in a register across its calls.
type headFlags uint8

const (
	hfChunk headFlags = 1 << iota
	hfClose
	hfKeepAlive
	hfPlain
	hfCookie
	hfLength
	hfTE
)

// special reads a line whose name is one the framing or the plain check
// looks at (but Content-Length, which fastHead reads itself), as
// h1resp.header and plainCheck.line read it; false: a line the general
// path must read (it fails it, or it is too rare to read here).
func (fl *headFlags) special(name, value []byte) bool {
	plain := *fl&hfPlain != 0
	switch len(name) {
	case len(setCookie): // and Connection
		if lowerIs(name, "set-cookie") {
			if plain {
				*fl |= hfCookie
			}
		} else if lowerIs(name, "connection") {
			v, ascii := trimSpaces(value)
			if !ascii {
				return false
			}
			if bytes.EqualFold(v, []byte("close")) {
				*fl |= hfClose
			} else if bytes.EqualFold(v, []byte("keep-alive")) {
				*fl |= hfKeepAlive
			}
		}
	case len(hdrTransferEncoding):
		if lowerIs(name, "transfer-encoding") {
			v, ascii := trimSpaces(value)
			if !ascii {
				return false
			}
			chunked := bytes.EqualFold(v, []byte("chunked"))
			if chunked {
				*fl |= hfChunk
			} else if !bytes.EqualFold(v, []byte("identity")) {
				return false // the general path's error
			}
			if plain {
				if *fl&hfTE != 0 || !chunked {
					*fl &^= hfPlain
				}
				*fl |= hfTE
			}
		}
	case len(hdrTrailer):
		if lowerIs(name, "trailer") {
			*fl &^= hfPlain
		}
	}
	return true
}

// valueScan is the index of the first byte of b below 0x20 (a tab
// included) or 0x7F, or len(b): in a head of the common form, the CR that
// ends a line. Eight bytes at a time; in each word the lowest flagged byte
// is exact (a borrow only runs up from a flagged byte).
func valueScan(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		del := w ^ (0x7f * ones)
		if m := (w-0x20*ones)&^w&highs | (del-ones)&^del&highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < ' ' || c == 0x7f {
			return i
		}
	}
	return i
}

// nameScan is the index of the first byte of b from i on that is not a
// token byte, or len(b). Letters, digits and '-' are passed eight at a
// time (alnumDash's arithmetic: in each word the lowest flagged byte is
// exact, a carry only runs up from a byte of 0x80 and above, itself
// flagged), other token bytes one at a time.
func nameScan(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b)-i >= 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		l := w | 0x20*ones
		letter := (l + (0x80-'a')*ones) &^ (l + (0x7f-'z')*ones)
		digit := (w + (0x80-'0')*ones) &^ (w + (0x7f-'9')*ones)
		d := w ^ '-'*ones
		dash := ^(d + 0x7f*ones)
		m := (^(letter | digit | dash) | w) & highs
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		break
	}
	for i < len(b) && tokenByte[b[i]] {
		i++
	}
	return i
}

// contentLength is parseDec of v with spaces trimmed off both ends, for
// a value of no control bytes and no tab: what the general path's
// parseDec(bytes.TrimSpace(v)) gives when v is ASCII. Any other byte fails
// it, and the general path reads the line (bytes.TrimSpace also trims
// Unicode spaces).
func contentLength(v []byte) (int64, bool) {
	i, j := 0, len(v)
	for i < j && v[i] == ' ' {
		i++
	}
	for j > i && v[j-1] == ' ' {
		j--
	}
	return parseDec(v[i:j])
}

// trimSpaces trims spaces off both ends of v, a value of no control
// bytes and no tab; ascii false when v has a byte of 0x80 and above, for
// which bytes.TrimSpace, the general path's, also trims Unicode spaces.
func trimSpaces(v []byte) (out []byte, ascii bool) {
	for _, c := range v {
		if c >= 0x80 {
			return nil, false
		}
	}
	for len(v) > 0 && v[0] == ' ' {
		v = v[1:]
	}
	for len(v) > 0 && v[len(v)-1] == ' ' {
		v = v[:len(v)-1]
	}
	return v, true
}
