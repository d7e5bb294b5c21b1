package script

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	brotli "github.com/molecule-man/go-brrr"
)

// bodyLog is a loopback server keeping each request's headers and body.
type bodyLog struct {
	mu     sync.Mutex
	header []http.Header
	body   [][]byte
}

func (l *bodyLog) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.header = append(l.header, r.Header.Clone())
		l.body = append(l.body, b)
		l.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHTTPFileMultipart(t *testing.T) {
	log := &bodyLog{}
	base := log.serve(t)
	path := writeScript(t, "s.js", `
import http from 'k6/http';
const bin = new Uint8Array([0, 1, 2, 255]).buffer;
export default function () {
  const f = http.file('file contents', 'notes.txt', 'text/plain');
  console.log(f.data, f.filename, f.content_type, http.file('x').content_type);
  http.post(__ENV.BASE + '/upload', { note: 'hello', upload: f, raw: http.file(bin, 'b.bin') });
}
`)
	var out consoleLines
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	if got := strings.Join(out.all(), "|"); got != "file contents notes.txt text/plain application/octet-stream" {
		t.Errorf("FileData %q", got)
	}
	if len(log.body) != 1 {
		t.Fatalf("%d requests, want 1", len(log.body))
	}
	mt, ps, err := mime.ParseMediaType(log.header[0].Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q, want multipart/form-data", log.header[0].Get("Content-Type"))
	}
	r := multipart.NewReader(bytes.NewReader(log.body[0]), ps["boundary"])
	type part struct{ name, file, ctype, data string }
	var parts []part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(b)})
	}
	want := []part{
		{"note", "", "", "hello"},
		{"raw", "b.bin", "application/octet-stream", "\x00\x01\x02\xff"},
		{"upload", "notes.txt", "text/plain", "file contents"},
	}
	if fmt.Sprint(parts) != fmt.Sprint(want) {
		t.Fatalf("parts %q\nwant  %q", parts, want)
	}
}

func TestHTTPCompression(t *testing.T) {
	log := &bodyLog{}
	base := log.serve(t)
	algos := []string{"gzip", "deflate", "br", "zstd", "gzip, br"}
	path := writeScript(t, "s.js", `
import http from 'k6/http';
const algos = `+"`"+strings.Join(algos, "|")+"`"+`.split('|');
export default function () {
  for (const a of algos) http.post(__ENV.BASE + '/', 'the body '.repeat(20), { compression: a });
  try { http.post(__ENV.BASE + '/', 'x', { compression: 'lz4' }); } catch (e) { console.log(e.message); }
}
`)
	var out consoleLines
	runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	if got := strings.Join(out.all(), "|"); !strings.Contains(got, `unknown algorithm "lz4"`) {
		t.Errorf("lz4: console %q, want it refused by name", got)
	}
	if len(log.body) != len(algos) {
		t.Fatalf("%d requests, want %d", len(log.body), len(algos))
	}
	for i, a := range algos {
		if got := log.header[i].Get("Content-Encoding"); got != a {
			t.Errorf("%s: Content-Encoding %q", a, got)
		}
		b := log.body[i]
		steps := strings.Split(a, ", ")
		for j := len(steps) - 1; j >= 0; j-- {
			var err error
			b, err = decompress(steps[j], b)
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
		}
		if string(b) != strings.Repeat("the body ", 20) {
			t.Errorf("%s: decompressed %q", a, b)
		}
	}
}

func decompress(algo string, b []byte) ([]byte, error) {
	var r io.Reader
	var err error
	switch algo {
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(b))
	case "br":
		return brotli.Decompress(b)
	case "zstd":
		var d *zstd.Decoder
		if d, err = zstd.NewReader(bytes.NewReader(b)); err == nil {
			defer d.Close()
			r = d
		}
	}
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// digestServer answers 401 with a Digest challenge unless the request
// carries the right response for user:pass (qop auth, algorithm algo).
func digestServer(t *testing.T, algo string) (string, *int) {
	newHash := md5.New
	if strings.HasPrefix(algo, "SHA-256") {
		newHash = sha256.New
	}
	h := func(s string) string {
		var d hash.Hash = newHash()
		d.Write([]byte(s))
		return hex.EncodeToString(d.Sum(nil))
	}
	var mu sync.Mutex
	ok := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const realm, nonce = "me@test", "dcd98b7102dd2f0e8b11d0f600bfb0c093"
		if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Digest ") {
			p := digestParams(a[len("Digest "):])
			ha1 := h("user:" + realm + ":passwd")
			if strings.HasSuffix(algo, "-sess") {
				ha1 = h(ha1 + ":" + nonce + ":" + p["cnonce"])
			}
			want := h(ha1 + ":" + nonce + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + h(r.Method+":"+r.URL.RequestURI()))
			if p["response"] == want && p["username"] == "user" && p["uri"] == r.URL.RequestURI() && p["opaque"] == "op, aque" {
				mu.Lock()
				ok++
				mu.Unlock()
				return
			}
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Digest realm="%s", qop="auth,auth-int", nonce="%s", opaque="op, aque", algorithm=%s`, realm, nonce, algo))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &ok
}

func TestHTTPDigestAuth(t *testing.T) {
	for _, algo := range []string{"MD5", "SHA-256", "MD5-sess"} {
		base, ok := digestServer(t, algo)
		path := writeScript(t, "s.js", `
import http from 'k6/http';
export const options = { iterations: 2 };
export default function () {
  const url = __ENV.BASE.replace('http://', 'http://user:passwd@') + '/digest-auth/auth/user/passwd?x=1';
  console.log(http.get(url, { auth: 'digest' }).status);
  try { http.get(url, { auth: 'ntlm' }); } catch (e) { console.log(e.message); }
}
`)
		var out consoleLines
		r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
		lines := out.all()
		if len(lines) != 4 || lines[0] != "200" || !strings.Contains(lines[1], `"ntlm" is not supported`) {
			t.Errorf("%s: console %q, want 200 and ntlm refused, twice", algo, lines)
		}
		if *ok != 2 {
			t.Errorf("%s: %d authenticated requests, want 2", algo, *ok)
		}
		c := r.Phases()[0].Counts()
		if c.IterOK != 2 || c.IterFailed != 0 {
			t.Errorf("%s: counts %+v: the challenge's 401 must not fail the iteration", algo, c)
		}
	}
}
