package engine

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A script's res.headers is k6's, and k6 reads net/http's Response.Header:
// on both HTTP/1.1 transports Headers() is what net/http's response reader
// makes of the same bytes. No Content-Type the server did not send (fasthttp
// reports a default), no Transfer-Encoding, no chunked body's Trailer line
// nor trailer fields (net/http keeps those in Response.Trailer).
func TestHeadersAsNetHTTP(t *testing.T) {
	t.Parallel()
	for _, wire := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 204 No Content\r\nServer: s\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTrailer: X-T\r\nContent-Length: 2\r\n\r\nok", // not chunked: net/http keeps the line
	} {
		want := netHTTPHeader(t, wire)
		s := newRawServer(t, answer(wire, true))
		for _, raw := range []bool{false, true} {
			r := lane(t, raw, DriverConfig{})
			for _, keep := range []func(*Request){
				nil, func(q *Request) { q.DiscardBody, q.KeepHeader = true, true },
			} {
				req := Request{URL: s.url + "/x"}
				if keep != nil {
					keep(&req)
				}
				var res Response
				if r.Iterate(&req, time.Time{}, &res) != IterationOK {
					t.Fatalf("%q on %s: %v", wire, transportName2(raw), res.Err)
				}
				// None is none, a nil map or an empty one.
				if got := res.Headers(); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
					t.Errorf("%q on %s (discard body %v): headers %v, net/http's %v", wire, transportName2(raw), req.DiscardBody, got, want)
				}
				if got, w := res.HeaderValues("Content-Type"), want["Content-Type"]; !reflect.DeepEqual(got, w) {
					t.Errorf("%q on %s: Content-Type %q, net/http's %q", wire, transportName2(raw), got, w)
				}
			}
		}
	}
}

// netHTTPHeader is the Response.Header net/http's client makes of wire, its
// body read to the end (the trailer then read too).
func netHTTPHeader(t *testing.T, wire string) http.Header {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/x", nil)
	res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(wire)), req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Header
}

// A body goes on any method, GET and HEAD too, as net/http sends it: with
// its Content-Length and no Content-Type the request has not got (fasthttp
// adds application/octet-stream); a Content-Type given is sent as given.
func TestRequestBodyAsNetHTTP(t *testing.T) {
	t.Parallel()
	s := newRawServer(t, answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true))
	for _, method := range []string{"GET", "HEAD", "DELETE", "OPTIONS", "POST", "PUT"} {
		for _, ct := range []string{"", "text/plain"} {
			for _, raw := range []bool{false, true} {
				r := lane(t, raw, DriverConfig{})
				req := Request{Method: method, URL: s.url + "/b", Body: []byte("a body")}
				if ct != "" {
					req.Header = http.Header{"Content-Type": {ct}}
				}
				var res Response
				if r.Iterate(&req, time.Time{}, &res) != IterationOK {
					t.Fatalf("%s with a body on %s: %v (status %d)", method, transportName2(raw), res.Err, res.Status)
				}
				wires, _ := s.stats()
				got, err := http.ReadRequest(bufio.NewReader(strings.NewReader(wires[len(wires)-1])))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(got.Body)
				if got.Method != method || string(body) != "a body" || got.ContentLength != 6 ||
					!reflect.DeepEqual(got.Header["Content-Type"], req.Header["Content-Type"]) {
					t.Errorf("%s (Content-Type %q) on %s: the server got %s, Content-Length %d, Content-Type %q, body %q",
						method, ct, transportName2(raw), got.Method, got.ContentLength, got.Header["Content-Type"], body)
				}
			}
		}
	}
}
