package engine

import (
	"bytes"
	"encoding/binary"
	"net/http"

	"github.com/valyala/fasthttp"
)

// A response's headers, kept raw until asked for. Copying every header
// into an http.Header cost a script request about 1 µs and 8 allocations,
// and most scripts never read res.headers: the fasthttp transport keeps
// the header lines in one buffer (rawHeader, one allocation) and
// Response.Headers builds the map on first use, from the same lines in the
// same order, so what a reader sees is what the eager copy gave.
//
// The buffer is one byte, hasCookie when a line is Set-Cookie (else 0),
// then a run of (uvarint length, name, uvarint length, value) records, in
// fasthttp's order of the response's header lines. The first byte answers
// the jar's look for Set-Cookie after every script request without a scan
// of the records.

const hasCookie = 1

// lazyHead marks, in the first byte, a buffer that is a header block as
// it came off the wire (status line, header lines, the empty line): the
// raw transport keeps a plain block unparsed (plainCheck) and the records
// are made from it when the headers are first read (Response.records).
// hasCookie is set beside it when a line is Set-Cookie.
const lazyHead = 2

// keepHeader returns h's header lines as a rawHeader buffer of its own
// (nil for none), built in scratch, which it returns for the next call: one
// pass over the headers and one allocation of exactly the buffer's size.
//
// The lines are what net/http's Response.Header holds (k6 reads its
// res.headers there), not all fasthttp reports: h must have been read with
// SetNoDefaultContentType (else a response without Content-Type shows
// fasthttp's default), and Transfer-Encoding is left out, as are a chunked
// body's Trailer declaration and its trailer fields (net/http moves those
// to Response.Trailer, which k6 does not show; fasthttp lists the names of
// fields read from a trailer as a Trailer line, declared or not).
func keepHeader(h *fasthttp.ResponseHeader, scratch []byte) (raw, next []byte) {
	b := append(scratch[:0], 0)
	chunked := h.ContentLength() == -1
	for k, v := range h.All() {
		if bytes.EqualFold(k, []byte(hdrTransferEncoding)) || chunked && bytes.EqualFold(k, []byte(hdrTrailer)) {
			continue
		}
		if len(k) == len(setCookie) && bytes.EqualFold(k, []byte(setCookie)) {
			b[0] = hasCookie
		}
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	if len(b) == 1 {
		return nil, b
	}
	return append([]byte(nil), b...), b
}

const (
	setCookie           = "Set-Cookie"
	hdrTransferEncoding = "Transfer-Encoding"
	hdrTrailer          = "Trailer"
)

// eachHeader calls f with each name and value of raw, in order, until f
// returns false.
func eachHeader(raw []byte, f func(k, v []byte) bool) {
	raw = raw[1:]
	next := func() []byte {
		n, w := binary.Uvarint(raw)
		s := raw[w : w+int(n)]
		raw = raw[w+int(n):]
		return s
	}
	for len(raw) > 0 {
		k := next()
		if !f(k, next()) {
			return
		}
	}
}

// Headers returns the response's headers, building them from the raw lines
// on the first call (Header is then set, and later calls return it). A
// response that kept no headers (Request.DiscardBody without KeepHeader,
// or a failed attempt) has none.
func (r *Response) Headers() http.Header {
	if r.Header == nil && r.rawHeader != nil {
		r.records()
	}
	if r.Header == nil && r.rawHeader != nil {
		n := 0
		eachHeader(r.rawHeader, func(_, _ []byte) bool { n++; return true })
		h := make(http.Header, n)
		eachHeader(r.rawHeader, func(k, v []byte) bool {
			h.Add(string(k), string(v))
			return true
		})
		r.Header, r.rawHeader = h, nil
	}
	return r.Header
}

// HeaderValues returns the values of the canonical header name key (as
// Headers()[key] would), without building the map when it is not built
// yet: a script asks for Set-Cookie after every request, for its jar.
func (r *Response) HeaderValues(key string) []string {
	if r.Header != nil || r.rawHeader == nil {
		return r.Header[key]
	}
	if key == setCookie && r.rawHeader[0]&hasCookie == 0 {
		return nil
	}
	if r.records(); r.rawHeader == nil {
		return nil
	}
	// One pass over the records, no callback: this runs after every
	// script request, so a name of another length is skipped unread.
	var vs []string
	for raw := r.rawHeader[1:]; len(raw) > 0; {
		n, w := binary.Uvarint(raw)
		k := raw[w : w+int(n)]
		raw = raw[w+int(n):]
		n, w = binary.Uvarint(raw)
		v := raw[w : w+int(n)]
		raw = raw[w+int(n):]
		if len(k) == len(key) && bytes.EqualFold(k, []byte(key)) {
			vs = append(vs, string(v))
		}
	}
	return vs
}

// records makes a lazy header block (lazyHead) into records, with
// fasthttp's header reader as the raw transport's keepHead would have
// parsed it when the response came. plainCheck let only a block that
// reader takes be kept unparsed; were it to fail all the same (a bug),
// the response shows no headers.
func (r *Response) records() {
	if r.rawHeader[0]&lazyHead == 0 {
		return
	}
	hp, err := parseHead(r.rawHeader[1:])
	defer headParsers.Put(hp)
	r.rawHeader = nil
	if err == nil {
		r.rawHeader, _ = keepHeader(&hp.h, nil)
	}
}

// plainCheck is h1resp's check, line by line as it reads a header block,
// that fasthttp's response header reader is sure to take the block
// without an error, so that its parse can wait until the headers are read
// (most scripts never read them) without changing the request's outcome.
// It is stricter than that reader: a block it does not pass is parsed at
// once, as before.
//
// Passed: a status line "HTTP/d.d ddd" with an optional reason of header
// value bytes; header lines "name:value", the name of token bytes, the
// value of header value bytes (HTAB, 0x20–0x7E, 0x80–0xFF); every line
// ended by CRLF, none folded (a line that starts with a space or tab has
// no token name); Content-Length at most once, of 1–18 digits;
// Transfer-Encoding at most once, "chunked"; no Trailer line (its names
// are parsed, and may fail). Each rule stands for an error of fasthttp's
// parseFirstLine or parseHeaders (v1.79): a missing or malformed status
// code or version, a malformed line or name, a control byte in a value, a
// duplicate or non-numeric Content-Length, a second or unknown
// Transfer-Encoding, a bad Trailer. (The block's end, CRLF CRLF with
// nothing after it, is h1resp's own framing.) TestPlainHeadTakenByFastHTTP
// checks the claim against fasthttp itself.
type plainCheck struct {
	on     bool // check the next header block (the raw transport, when it keeps headers)
	ok     bool // the block read so far passes
	cookie bool // a line is Set-Cookie
	length bool // a Content-Length line was seen
	te     bool // a Transfer-Encoding line was seen
}

// status starts the check of a block at its status line (without its
// line end; cr: the line ended with CRLF).
func (c *plainCheck) status(line []byte, cr bool) {
	*c = plainCheck{on: c.on}
	c.ok = c.on && cr && len(line) >= 12 && string(line[:5]) == "HTTP/" && digit(line[5]) && line[6] == '.' &&
		digit(line[7]) && line[8] == ' ' && line[9] >= '1' && line[9] <= '9' && digit(line[10]) && digit(line[11]) &&
		(len(line) == 12 || line[12] == ' ' && valueEnd(line[13:]) == len(line)-13)
}

// line checks a header line: its name (up to the colon) and raw value
// (after the colon, before the line end); cr: the line ended with CRLF.
func (c *plainCheck) line(name, value []byte, cr bool) {
	if !c.ok {
		return
	}
	for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
		value = value[1:]
	}
	if !cr || !tokenName(name) || valueEnd(value) != len(value) {
		c.ok = false
		return
	}
	switch len(name) {
	case len(setCookie):
		c.cookie = c.cookie || lowerIs(name, "set-cookie")
	case len(hdrContentLength):
		if lowerIs(name, "content-length") {
			v := trimOWS(value)
			c.ok = !c.length && len(v) > 0 && len(v) <= 18 && digits(v)
			c.length = true
		}
	case len(hdrTransferEncoding):
		if lowerIs(name, "transfer-encoding") {
			c.ok = !c.te && bytes.EqualFold(trimOWS(value), []byte("chunked"))
			c.te = true
		}
	case len(hdrTrailer):
		c.ok = !lowerIs(name, "trailer")
	}
}

const hdrContentLength = "Content-Length"

// valueEnd is the index of the first byte of b that is not a
// header value byte (HTAB, 0x20–0x7E, 0x80–0xFF: fasthttp's table), or
// len(b): valueScan's stop (h1fast.go), passing tabs.
func valueEnd(b []byte) int {
	i := valueScan(b)
	for i < len(b) && b[i] == '\t' {
		i++
		i += valueScan(b[i:])
	}
	return i
}

// tokenName reports whether name is not empty and all token bytes. Names
// of letters, digits and '-' of 8 bytes or more are checked 8 bytes at a
// time.
func tokenName(name []byte) bool {
	n := len(name)
	if n == 0 {
		return false
	}
	if n >= 8 {
		i := 0
		for ; i+8 <= n && alnumDash(binary.LittleEndian.Uint64(name[i:])); i += 8 {
		}
		if i+8 > n && alnumDash(binary.LittleEndian.Uint64(name[n-8:])) {
			return true
		}
	}
	for _, c := range name {
		if !tokenByte[c] {
			return false
		}
	}
	return true
}

// alnumDash reports whether each byte of w is an ASCII letter, a digit or
// '-'. Each test adds to bytes below 0x80 without a carry into the next
// byte: x + (0x80-lo) has its top bit set when x >= lo, x + (0x7f-hi) when
// x > hi.
func alnumDash(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if w&highs != 0 {
		return false
	}
	l := w | 0x20*ones // a letter's lower case; no other byte lands on one
	letter := (l + (0x80-'a')*ones) &^ (l + (0x7f-'z')*ones)
	digit := (w + (0x80-'0')*ones) &^ (w + (0x7f-'9')*ones)
	d := w ^ '-'*ones
	dash := ^(d + 0x7f*ones)
	return (letter|digit|dash)&highs == highs
}

// lowerIs reports whether name, of token bytes, is lower (lower-case
// letters and '-') in any case: among token bytes only a letter's two
// cases differ by 0x20 alone from a letter or '-'.
func lowerIs(name []byte, lower string) bool {
	n := len(lower)
	if len(name) != n {
		return false
	}
	if n >= 8 { // eight bytes at a time, the last word overlapping
		const lows = 0x2020202020202020
		for i := 0; i < n-8; i += 8 {
			if binary.LittleEndian.Uint64(name[i:])|lows != stringWord(lower[i:]) {
				return false
			}
		}
		return binary.LittleEndian.Uint64(name[n-8:])|lows == stringWord(lower[n-8:])
	}
	for i := range n {
		if name[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// stringWord is s's first eight bytes as a little-endian uint64.
func stringWord(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// trimOWS trims spaces and tabs off b's end (b starts after them).
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func digit(c byte) bool { return c >= '0' && c <= '9' }

func digits(b []byte) bool {
	for _, c := range b {
		if !digit(c) {
			return false
		}
	}
	return true
}

// tokenByte marks RFC 9110's token bytes, the bytes of a header name.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// lazyLen is the length of a lazy header buffer of a block of n bytes.
func lazyLen(n int) int { return 1 + n }

// lazyHeader is block kept as a lazy header buffer, in room when it is
// room's length (room then is no one else's), else in an allocation of
// its own.
func lazyHeader(block []byte, cookie bool, room []byte) []byte {
	raw := room[:len(room):len(room)]
	if len(raw) != lazyLen(len(block)) {
		raw = make([]byte, lazyLen(len(block)))
	}
	raw[0] = lazyHead
	if cookie {
		raw[0] |= hasCookie
	}
	copy(raw[1:], block)
	return raw
}
