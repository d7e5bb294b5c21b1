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
	if key == setCookie && r.rawHeader[0] != hasCookie {
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
