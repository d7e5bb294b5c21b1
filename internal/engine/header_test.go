package engine

import (
	"bufio"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// The raw headers, made into a map when asked, give what copying every
// header line at once gave; HeaderValues agrees with the map, built or not.
func TestRawHeaderMatchesEagerCopy(t *testing.T) {
	const wire = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n" +
		"Set-Cookie: a=1; Path=/\r\nx-lower: one\r\nSet-Cookie: b=2\r\nX-Lower: two\r\nX-Empty:\r\n\r\nok"
	var h fasthttp.ResponseHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(wire))); err != nil {
		t.Fatal(err)
	}
	want := http.Header{}
	for k, v := range h.All() {
		want.Add(string(k), string(v))
	}
	raw, _ := keepHeader(&h, nil)
	res := Response{rawHeader: raw}
	if got := res.HeaderValues("Set-Cookie"); !reflect.DeepEqual(got, want["Set-Cookie"]) {
		t.Errorf("Set-Cookie before the map: %q, want %q", got, want["Set-Cookie"])
	}
	if got := res.HeaderValues("X-Absent"); got != nil {
		t.Errorf("an absent header: %q", got)
	}
	if res.Header != nil {
		t.Error("HeaderValues built the map")
	}
	got := res.Headers()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headers %v, want %v", got, want)
	}
	if len(got["X-Lower"]) != 2 || got.Get("X-Empty") != "" || got.Get("Content-Length") != "2" {
		t.Errorf("headers %v", got)
	}
	if v := res.HeaderValues("X-Lower"); !reflect.DeepEqual(v, []string{"one", "two"}) {
		t.Errorf("X-Lower after the map: %q", v)
	}
	var none Response
	if none.Headers() != nil || none.HeaderValues("Set-Cookie") != nil {
		t.Error("a response without headers has some")
	}
}

// BenchmarkResponseHeaders: what a script request pays for its response's
// headers when the script does not read them — the raw buffer and the
// jar's Set-Cookie look — against the http.Header copy made before.
func BenchmarkResponseHeaders(b *testing.B) {
	const wire = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 06 Dec 2026 06:00:00 GMT\r\n" +
		"Content-Type: text/html\r\nContent-Length: 17\r\nLast-Modified: Sun, 06 Dec 2026 05:00:00 GMT\r\n" +
		"Connection: keep-alive\r\nETag: \"6752a1c0-11\"\r\nAccept-Ranges: bytes\r\n\r\n"
	var h fasthttp.ResponseHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(wire))); err != nil {
		b.Fatal(err)
	}
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			m := make(http.Header)
			for k, v := range h.All() {
				m.Add(string(k), string(v))
			}
			_ = m["Set-Cookie"]
		}
	})
	b.Run("raw", func(b *testing.B) {
		var scratch []byte
		b.ReportAllocs()
		for range b.N {
			var raw []byte
			raw, scratch = keepHeader(&h, scratch)
			r := Response{rawHeader: raw}
			_ = r.HeaderValues("Set-Cookie")
		}
	})
}

// A response without Set-Cookie answers the jar's look from the buffer's
// first byte; its other headers read as before.
func TestRawHeaderWithoutCookie(t *testing.T) {
	const wire = "HTTP/1.1 200 OK\r\nServer: nginx\r\nX-Set-Cookie: no\r\nContent-Length: 0\r\n\r\n"
	var h fasthttp.ResponseHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(wire))); err != nil {
		t.Fatal(err)
	}
	raw, _ := keepHeader(&h, nil)
	res := Response{rawHeader: raw}
	if got := res.HeaderValues("Set-Cookie"); got != nil {
		t.Errorf("Set-Cookie: %q, want none", got)
	}
	if got := res.HeaderValues("X-Set-Cookie"); !reflect.DeepEqual(got, []string{"no"}) {
		t.Errorf("X-Set-Cookie: %q", got)
	}
	if got := res.Headers(); got.Get("Server") != "nginx" || got.Get("X-Set-Cookie") != "no" || got["Set-Cookie"] != nil {
		t.Errorf("headers %v", got)
	}
}
