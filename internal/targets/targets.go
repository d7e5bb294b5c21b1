// Package targets reads the HTTP targets a load phase sends: vegeta's HTTP
// target format from a file or stdin, or URLs given on the command line.
//
// The format, one target after another:
//
//	# a comment line
//	GET http://127.0.0.1:8080/items?id=1
//	X-Account-ID: 8675309
//
//	POST http://127.0.0.1:8080/items
//	Content-Type: application/json
//	@bodies/item.json
//
// A target is a request line (METHOD URL) followed by header lines
// (Key: Value) and at most one body line (@path, resolved against the
// targets file's directory; the body file is read once, at parse time). A
// blank line or the next request line ends a target. Lines starting with #
// are comments. Every problem is reported as an error naming the input and
// the line ("targets.txt:7: header line has no colon"), never a panic.
package targets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Target is one request a phase sends. A Target is read-only once built:
// the engine shares it between workers.
type Target struct {
	// Method is the HTTP method, an uppercase token such as GET.
	Method string
	// URL is absolute, with scheme http or https and a host.
	URL *url.URL
	// Header holds the target's headers; it is never nil. A Host header
	// is kept here and also applies as the request's Host.
	Header http.Header
	// Body is sent with every request; nil for none.
	Body []byte
}

// MaxLine is the longest line Parse accepts, in bytes.
const MaxLine = 1 << 20

// Option configures Parse.
type Option func(*parser)

// WithDir resolves relative @body paths against dir (default: the current
// directory).
func WithDir(dir string) Option { return func(p *parser) { p.dir = dir } }

// WithReadFile replaces os.ReadFile for @body files (tests and fuzzing read
// from memory).
func WithReadFile(f func(path string) ([]byte, error)) Option {
	return func(p *parser) { p.readFile = f }
}

type parser struct {
	name     string
	dir      string
	readFile func(string) ([]byte, error)
}

// Load reads the targets file at path; "-" reads in instead (stdin), with
// @body paths relative to the current directory.
func Load(path string, in io.Reader) ([]Target, error) {
	if path == "-" {
		return Parse(in, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("targets file: %w", unwrapPath(err))
	}
	defer f.Close()
	return Parse(f, path, WithDir(filepath.Dir(path)))
}

// unwrapPath keeps an *os.PathError's message short: "open x: no such file".
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err
}

// Parse reads targets in vegeta's HTTP format from r. name is what errors
// call the input. It returns at least one target or an error naming
// name:line and the problem.
func Parse(r io.Reader, name string, opts ...Option) ([]Target, error) {
	p := &parser{name: name, dir: ".", readFile: os.ReadFile}
	for _, o := range opts {
		o(p)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLine)
	var (
		out  []Target
		cur  *Target
		line int
		body bool // cur already has its body line
	)
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur, body = nil, false
		}
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "":
			flush()
		case strings.HasPrefix(text, "#"):
			// a comment
		case cur == nil || looksLikeRequest(text):
			flush()
			t, err := parseRequestLine(text)
			if err != nil {
				return nil, p.errorf(line, "%v", err)
			}
			cur = &t
		case strings.HasPrefix(text, "@"):
			if body {
				return nil, p.errorf(line, "second body line; a target has at most one @body")
			}
			b, err := p.body(strings.TrimSpace(text[1:]))
			if err != nil {
				return nil, p.errorf(line, "%v", err)
			}
			cur.Body, body = b, true
		default:
			if body {
				return nil, p.errorf(line, "header line after the @body line")
			}
			k, v, err := ParseHeader(text)
			if err != nil {
				return nil, p.errorf(line, "%v", err)
			}
			cur.Header.Add(k, v)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, p.errorf(line+1, "line longer than %d bytes", MaxLine)
		}
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	flush()
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no targets (expected lines like \"GET http://127.0.0.1:8080/\")", p.name)
	}
	return out, nil
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, line, fmt.Sprintf(format, args...))
}

func (p *parser) body(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("body line names no file (expected @path/to/body)")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	b, err := p.readFile(path)
	if err != nil {
		return nil, fmt.Errorf("body file: %w", unwrapPath(err))
	}
	return b, nil
}

// looksLikeRequest reports whether a line inside a target starts the next
// one: an uppercase method token, a space, then an http(s) URL. Header lines
// always have a colon right after their key, so they never match.
func looksLikeRequest(line string) bool {
	m, rest, ok := strings.Cut(line, " ")
	if !ok || !isMethod(m) {
		return false
	}
	rest = strings.TrimSpace(rest)
	return strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://")
}

func parseRequestLine(line string) (Target, error) {
	fields := strings.Fields(line)
	if len(fields) != 2 {
		return Target{}, fmt.Errorf("request line %q: want METHOD URL", clip(line))
	}
	if !isMethod(fields[0]) {
		return Target{}, fmt.Errorf("request line %q: method %q is not an uppercase token", clip(line), clip(fields[0]))
	}
	u, err := ParseURL(fields[1])
	if err != nil {
		return Target{}, err
	}
	return Target{Method: fields[0], URL: u, Header: http.Header{}}, nil
}

// ParseURL parses an absolute http or https URL with a host, the only kind
// a target may have.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("malformed URL %q: %v", clip(raw), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q: scheme must be http or https", clip(raw))
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host", clip(raw))
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("URL %q: port %q is not a number", clip(raw), p)
			}
		}
	}
	return u, nil
}

// ParseHeader splits a "Key: Value" header line, checking that the key is
// an HTTP token and the value holds no control characters.
func ParseHeader(line string) (key, value string, err error) {
	k, v, ok := strings.Cut(line, ":")
	if !ok {
		return "", "", fmt.Errorf("header line %q has no colon (want Key: Value)", clip(line))
	}
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if k == "" {
		return "", "", fmt.Errorf("header line %q has an empty key", clip(line))
	}
	for i := 0; i < len(k); i++ {
		if !isTokenChar(k[i]) {
			return "", "", fmt.Errorf("header key %q holds a character not allowed in a header name", clip(k))
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return "", "", fmt.Errorf("header %q value holds a control character", clip(k))
		}
	}
	return http.CanonicalHeaderKey(k), v, nil
}

// FromURLs builds one target per URL, each with the same method, headers
// and body: what command-line flags describe.
func FromURLs(urls []string, method string, header http.Header, body []byte) ([]Target, error) {
	if len(urls) == 0 {
		return nil, errors.New("no URLs")
	}
	if !isMethod(method) {
		return nil, fmt.Errorf("method %q is not an uppercase token such as GET", clip(method))
	}
	out := make([]Target, 0, len(urls))
	for _, raw := range urls {
		u, err := ParseURL(raw)
		if err != nil {
			return nil, err
		}
		h := header.Clone()
		if h == nil {
			h = http.Header{}
		}
		out = append(out, Target{Method: method, URL: u, Header: h, Body: bytes.Clone(body)})
	}
	return out, nil
}

// isMethod reports whether s is an uppercase HTTP method token. Methods are
// case-sensitive; requiring uppercase catches "get" typos and keeps request
// lines distinct from header lines.
func isMethod(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c may appear in an HTTP token (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// clip shortens what an error quotes so a binary file makes one readable line.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
