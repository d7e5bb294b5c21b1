package script

// k6/http's request bodies and authentication beyond a plain body:
// http.file and multipart/form-data, params.compression and
// params.auth = "digest", as k6's documentation describes them.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"github.com/klauspost/compress/zstd"
	brotli "github.com/molecule-man/go-brrr"

	"github.com/throttlekit/throttle/internal/engine"
)

// file is http.file(data, [filename], [contentType]): k6's FileData, an
// object with data, filename and content_type, marked as a file so that a
// body object holding it is sent as multipart/form-data.
func (m *httpModule) file(call sobek.FunctionCall) sobek.Value {
	rt := m.vu.rt
	data := call.Argument(0)
	if sobek.IsUndefined(data) || sobek.IsNull(data) {
		m.vu.throw("http.file: missing data (a string or an ArrayBuffer)")
	}
	o := rt.NewObject()
	_ = o.Set("data", data)
	filename := call.Argument(1)
	if !sobek.IsUndefined(filename) && !sobek.IsNull(filename) {
		_ = o.Set("filename", filename.String())
	}
	ct := "application/octet-stream"
	if v := call.Argument(2); !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		ct = v.String()
	}
	_ = o.Set("content_type", ct)
	_ = o.DefineDataPropertySymbol(m.fileMark, rt.ToValue(true), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	return o
}

// isFile reports whether v is an http.file() of this VU.
func (m *httpModule) isFile(v sobek.Value) (*sobek.Object, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	mark := o.GetSymbol(m.fileMark)
	return o, mark != nil && mark.ToBoolean()
}

// hasFile reports whether a body object holds an http.file().
func (m *httpModule) hasFile(o *sobek.Object) bool {
	for _, k := range o.Keys() {
		if _, ok := m.isFile(o.Get(k)); ok {
			return true
		}
	}
	return false
}

// multipartBody is a body object holding an http.file() as k6 sends it:
// multipart/form-data, one part per key (sorted, so the body is the same
// every time), a file with its filename and content type.
func (m *httpModule) multipartBody(req *engine.Request, o *sobek.Object) []byte {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	keys := o.Keys()
	sort.Strings(keys)
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace
	for _, k := range keys {
		v := o.Get(k)
		f, isFile := m.isFile(v)
		if !isFile {
			_ = w.WriteField(k, v.String())
			continue
		}
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name="%s"`, quote(k))
		if fn := f.Get("filename"); fn != nil && !sobek.IsUndefined(fn) {
			disp += fmt.Sprintf(`; filename="%s"`, quote(fn.String()))
		}
		h.Set("Content-Disposition", disp)
		h.Set("Content-Type", f.Get("content_type").String())
		part, _ := w.CreatePart(h)
		data := f.Get("data")
		if s, ok := data.Export().(string); ok {
			_, _ = part.Write([]byte(s))
		} else {
			_, _ = part.Write(m.vu.bytes(data))
		}
	}
	_ = w.Close()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", w.FormDataContentType())
	}
	return buf.Bytes()
}

// compress applies params.compression to the body: one algorithm or
// several separated by commas, applied in order (k6: gzip, deflate, br,
// zstd), named in Content-Encoding.
func (m *httpModule) compress(req *engine.Request, algorithms string) {
	var done []string
	for _, a := range strings.Split(algorithms, ",") {
		a = strings.TrimSpace(a)
		var out bytes.Buffer
		var err error
		switch a {
		case "gzip":
			w := gzip.NewWriter(&out)
			_, _ = w.Write(req.Body)
			err = w.Close()
		case "deflate":
			w := zlib.NewWriter(&out)
			_, _ = w.Write(req.Body)
			err = w.Close()
		case "br":
			var b []byte
			b, err = brotli.Compress(req.Body, 6)
			out.Write(b)
		case "zstd":
			var w *zstd.Encoder
			if w, err = zstd.NewWriter(&out); err == nil {
				_, _ = w.Write(req.Body)
				err = w.Close()
			}
		default:
			m.vu.throw("params.compression: unknown algorithm %q (k6 supports gzip, deflate, br and zstd, comma-separated to combine them)", a)
		}
		if err != nil {
			m.vu.throw("params.compression %s: %v", a, err)
		}
		req.Body = out.Bytes()
		done = append(done, a)
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Encoding", strings.Join(done, ", "))
}

// authMethod reads params.auth: "basic" (the URL's credentials, as without
// it) or "digest"; k6's "ntlm" is refused.
func (m *httpModule) authMethod(v sobek.Value) (digest bool) {
	switch a := v.String(); a {
	case "basic":
		return false
	case "digest":
		return true
	default:
		m.vu.throw("params.auth: %q is not supported by throttle (basic or digest)", a)
	}
	return false
}

// digestRequest is a request with auth: "digest": sent first without
// credentials; a 401 with a Digest challenge is answered by the same
// request with the Authorization the challenge asks for (RFC 7616: MD5,
// SHA-256, their -sess forms, qop auth). Both requests are counted, the
// challenge's 401 as expected, as k6 counts them.
func (m *httpModule) digestRequest(req *engine.Request, info *reqInfo) sobek.Value {
	u, err := url.Parse(req.URL)
	if err != nil || u.User == nil {
		m.vu.throw("auth: \"digest\" needs the credentials in the URL (http://user:pass@host/...)")
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	u.User = nil
	req.URL = u.String()
	s := m.lane(0)
	challengeCB := &statusSet{codes: map[int]bool{http.StatusUnauthorized: true}}
	if info.cb != nil {
		challengeCB.ranges = info.cb.ranges
		for c := range info.cb.codes {
			challengeCB.codes[c] = true
		}
	}
	s.cb = challengeCB
	var res engine.Response
	out := s.runner.Iterate(req, time.Time{}, &res)
	first := m.resolve(req, &res, out, info)
	if err := m.thrown(req, &res, out); err != nil {
		m.vu.throw("%v", err)
	}
	challenge := res.Headers().Get("WWW-Authenticate")
	if out == engine.IterationAborted || res.Status != http.StatusUnauthorized || !strings.HasPrefix(strings.ToLower(challenge), "digest ") {
		return first
	}
	authz, err := digestAuthorization(challenge, req.Method, u.RequestURI(), user, pass)
	if err != nil {
		m.vu.throw("auth digest: %v", err)
	}
	again := &m.reqs[m.next]
	m.next ^= 1
	*again = *req
	again.Header = req.Header.Clone()
	if again.Header == nil {
		again.Header = http.Header{}
	}
	again.Header.Set("Authorization", authz)
	s.cb = info.cb
	out = s.runner.Iterate(again, time.Time{}, &res)
	v := m.resolve(again, &res, out, info)
	if err := m.thrown(again, &res, out); err != nil {
		m.vu.throw("%v", err)
	}
	return v
}

// digestAuthorization answers a Digest challenge for method and uri.
func digestAuthorization(challenge, method, uri, user, pass string) (string, error) {
	p := digestParams(challenge[len("digest "):])
	algorithm := p["algorithm"]
	if algorithm == "" {
		algorithm = "MD5"
	}
	var newHash func() hash.Hash
	switch strings.TrimSuffix(strings.ToUpper(algorithm), "-SESS") {
	case "MD5":
		newHash = md5.New
	case "SHA-256":
		newHash = sha256.New
	default:
		return "", fmt.Errorf("algorithm %q is not supported (MD5, SHA-256)", algorithm)
	}
	h := func(s string) string {
		d := newHash()
		d.Write([]byte(s))
		return hex.EncodeToString(d.Sum(nil))
	}
	realm, nonce := p["realm"], p["nonce"]
	cnonceBytes := make([]byte, 8)
	_, _ = rand.Read(cnonceBytes)
	cnonce, nc := hex.EncodeToString(cnonceBytes), "00000001"
	ha1 := h(user + ":" + realm + ":" + pass)
	if strings.HasSuffix(strings.ToUpper(algorithm), "-SESS") {
		ha1 = h(ha1 + ":" + nonce + ":" + cnonce)
	}
	ha2 := h(method + ":" + uri)
	qop := ""
	for _, q := range strings.Split(p["qop"], ",") {
		if strings.TrimSpace(q) == "auth" {
			qop = "auth"
		}
	}
	if p["qop"] != "" && qop == "" {
		return "", fmt.Errorf("qop %q is not supported (auth)", p["qop"])
	}
	var response string
	if qop == "" {
		response = h(ha1 + ":" + nonce + ":" + ha2)
	} else {
		response = h(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + ha2)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `Digest username="%s", realm="%s", nonce="%s", uri="%s", algorithm=%s, response="%s"`, user, realm, nonce, uri, algorithm, response)
	if qop != "" {
		fmt.Fprintf(&b, `, qop=%s, nc=%s, cnonce="%s"`, qop, nc, cnonce)
	}
	if o := p["opaque"]; o != "" {
		fmt.Fprintf(&b, `, opaque="%s"`, o)
	}
	return b.String(), nil
}

// digestParams parses a challenge's comma-separated key=value and
// key="quoted, value" pairs.
func digestParams(s string) map[string]string {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimLeft(strings.TrimSpace(s), ",") {
		s = strings.TrimSpace(s)
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		key := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = strings.TrimSpace(s[eq+1:])
		var val string
		if strings.HasPrefix(s, `"`) {
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			val = strings.ReplaceAll(s[1:min(end, len(s))], `\`, "")
			s = s[min(end+1, len(s)):]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val = strings.TrimSpace(s[:end])
			s = s[end:]
		}
		out[key] = val
	}
	return out
}
