package script

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// k6 sends through Go's net/http, so what a script reads of res.headers,
// and what a server receives, is what a net/http client gets and sends:
// TestK6ExactHeadersAndBodies asks the same server the same things through
// a script (plain http on the raw transport, https on fasthttp) and
// through net/http, and wants the same answers. The server tells in
// response headers what it received (method, body, Content-Type).
func TestK6ExactHeadersAndBodies(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := w.Header()
		h["Content-Type"] = nil // no Content-Type sent, nor sniffed
		h["Date"] = nil         // differs from one second to the next
		switch r.URL.Path {
		case "/trailer": // chunked, with a declared trailer
			h.Set("Trailer", "X-T")
			io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			h.Set("X-T", "1")
		case "/undeclared": // chunked, with a trailer never declared
			io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			h.Set(http.TrailerPrefix+"X-U", "2")
		case "/echo":
			h.Set("X-Method", r.Method)
			h.Set("X-Body", string(b))
			h.Set("X-Length", r.Header.Get("Content-Length"))
			h["X-Content-Type"] = r.Header["Content-Type"]
			// Said, for HEAD too: a response of no announced length reads
			// as "Connection: close" on fasthttp's header parser, whether
			// the server said it or not (a difference left: README).
			h.Set("Content-Length", "0")
		default:
			io.WriteString(w, "ok")
		}
	})
	plain, tlsSrv := httptest.NewServer(handler), httptest.NewTLSServer(handler)
	t.Cleanup(plain.Close)
	t.Cleanup(tlsSrv.Close)

	type call struct{ method, path, body string }
	calls := []call{
		{"GET", "/bare", ""},
		{"GET", "/trailer", ""},
		{"GET", "/undeclared", ""},
		{"GET", "/echo", "a body"},
		{"HEAD", "/echo", "a body"},
		{"POST", "/echo", "a body"},
		{"DELETE", "/echo", "a body"},
	}
	// What net/http gives, as res.headers shows it (values joined).
	want := func(client *http.Client, base string) []map[string]string {
		var all []map[string]string
		for _, c := range calls {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			req, err := http.NewRequest(c.method, base+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			m := map[string]string{}
			for k, vs := range res.Header {
				m[k] = strings.Join(vs, ", ")
			}
			all = append(all, m)
		}
		return all
	}

	var js []string
	for _, c := range calls {
		js = append(js, fmt.Sprintf("[%q, %q, %q]", c.method, c.path, c.body))
	}
	var out consoleLines
	path := writeScript(t, "exact.js", `
import http from 'k6/http';
export const options = { iterations: 1 };
const calls = [`+strings.Join(js, ", ")+`];
export default function () {
  for (const base of [__ENV.BASE, __ENV.TLS]) {
    const got = [];
    for (const [m, p, b] of calls) {
      got.push(http.request(m, base + p, b === '' ? null : b).headers);
    }
    console.log(JSON.stringify(got));
  }
}
`)
	runScript(t, path, plain.URL, Config{Console: out.add, Insecure: true, Env: map[string]string{"TLS": tlsSrv.URL}}, 30*time.Second)
	lines := out.all()
	if len(lines) != 2 {
		t.Fatalf("console %q: want a line per base", lines)
	}
	for i, srv := range []*httptest.Server{plain, tlsSrv} {
		var got []map[string]string
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("%q: %v", lines[i], err)
		}
		exp := want(srv.Client(), srv.URL)
		for k, c := range calls {
			if k >= len(got) || !reflect.DeepEqual(got[k], exp[k]) {
				var g map[string]string
				if k < len(got) {
					g = got[k]
				}
				t.Errorf("%s %s %s with body %q: res.headers %v, net/http's %v", srv.URL[:5], c.method, c.path, c.body, g, exp[k])
			}
		}
	}
}
