package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
)

// A response on a worker's own connection is read by readResponse rather
// than http.ReadResponse: the engine needs only the status and the body's
// framing, and building the header map and Response cost about a sixth of
// the client's CPU per request against a loopback server. The framing rules
// are the transport's (RFC 9112 section 6.3).

// maxHeaderBytes bounds a response's status line and headers, as
// http.Transport's default MaxResponseHeaderBytes does.
const maxHeaderBytes = 10 << 20

// errHeaderTooLarge is the error of a response whose headers exceed
// maxHeaderBytes.
var errHeaderTooLarge = errors.New("engine: response headers exceed 10 MiB")

// head is what readHead found in a response's status line and headers.
type head struct {
	status    int
	minor     int   // HTTP/1.minor
	length    int64 // the Content-Length; -1 when absent
	chunked   bool  // Transfer-Encoding: chunked
	close     bool  // a Connection: close token
	keepAlive bool  // a Connection: keep-alive token (HTTP/1.0)
}

// readResponse reads one complete response to a request (HEAD when head
// is set) from br, body drained, skipping up to five interim 1xx responses
// as the transport does. keep says the connection may carry another request.
func readResponse(br *bufio.Reader, isHead bool) (status int, keep bool, err error) {
	for range 6 {
		h, err := readHead(br)
		if err != nil {
			return 0, false, err
		}
		if h.status >= 100 && h.status < 200 && h.status != 101 {
			continue
		}
		keep = !h.close && (h.minor >= 1 || h.keepAlive) && h.status != 101
		switch {
		case isHead || h.status == 204 || h.status == 304 || h.status == 101:
			// No body, whatever the headers say.
		case h.chunked:
			if err := drainChunked(br); err != nil {
				return 0, false, err
			}
		case h.length >= 0:
			if _, err := br.Discard(int(h.length)); err != nil {
				return 0, false, unexpected(err)
			}
		default:
			// No length: the body runs to the end of the connection.
			if _, err := io.Copy(io.Discard, br); err != nil {
				return 0, false, err
			}
			keep = false
		}
		return h.status, keep, nil
	}
	return 0, false, errors.New("engine: too many 1xx informational responses")
}

// readHead reads a status line and headers.
func readHead(br *bufio.Reader) (head, error) {
	h := head{length: -1}
	total := 0
	line, err := readLine(br, &total)
	if err != nil {
		return h, unexpected(err)
	}
	// HTTP/1.x NNN reason
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[7] < '0' || line[7] > '9' ||
		line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return h, fmt.Errorf("engine: malformed HTTP status line %q", line)
	}
	h.minor = int(line[7] - '0')
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return h, fmt.Errorf("engine: malformed HTTP status code %q", line[9:12])
		}
		h.status = h.status*10 + int(c-'0')
	}
	if h.status < 100 {
		return h, fmt.Errorf("engine: malformed HTTP status code %q", line[9:12])
	}
	te := false
	for {
		line, err := readLine(br, &total)
		if err != nil {
			return h, unexpected(err)
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			if line[0] == ' ' || line[0] == '\t' {
				continue // an obsolete folded continuation of the previous header
			}
			return h, fmt.Errorf("engine: malformed HTTP response header %q", line)
		}
		key, val := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case asciiEqualFold(key, "content-length"):
			n, ok := parseLength(val)
			if !ok || (h.length >= 0 && h.length != n) {
				return h, fmt.Errorf("engine: bad Content-Length %q", val)
			}
			h.length = n
		case asciiEqualFold(key, "transfer-encoding"):
			if h.minor == 0 {
				continue // HTTP/1.0 has no transfer codings
			}
			if te || !asciiEqualFold(val, "chunked") {
				return h, fmt.Errorf("engine: unsupported Transfer-Encoding %q", val)
			}
			te, h.chunked = true, true
		case asciiEqualFold(key, "connection"):
			for tok := range bytes.SplitSeq(val, []byte(",")) {
				tok = bytes.TrimSpace(tok)
				h.close = h.close || asciiEqualFold(tok, "close")
				h.keepAlive = h.keepAlive || asciiEqualFold(tok, "keep-alive")
			}
		}
	}
	return h, nil
}

// readLine returns the next line of br without its line ending, adding its
// length to total and failing once total passes maxHeaderBytes. A line
// longer than br's buffer is skipped whole and returned as one space, which
// no caller takes for a header it reads.
func readLine(br *bufio.Reader, total *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*total += len(line)
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			line, err = br.ReadSlice('\n')
			if *total += len(line); *total > maxHeaderBytes {
				return nil, errHeaderTooLarge
			}
		}
		if err != nil {
			return nil, err
		}
		return []byte(" "), nil
	}
	if err != nil {
		return nil, err
	}
	if *total > maxHeaderBytes {
		return nil, errHeaderTooLarge
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// drainChunked reads a chunked body and its trailer section.
func drainChunked(br *bufio.Reader) error {
	if _, err := io.Copy(io.Discard, httputil.NewChunkedReader(br)); err != nil {
		return unexpected(err)
	}
	total := 0
	for {
		line, err := readLine(br, &total)
		if err != nil {
			return unexpected(err)
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// parseLength parses a Content-Length value.
func parseLength(b []byte) (int64, bool) {
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

// asciiEqualFold reports whether b equals the lower-case ASCII s, ignoring
// case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// unexpected turns the end of the connection in the middle of a response
// into io.ErrUnexpectedEOF, as the transport reports it.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
