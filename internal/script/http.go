package script

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// DefaultRedirects is k6's default maxRedirects.
const DefaultRedirects = 10

// Sample is one resolved script request as the metrics see it: the hook
// for k6's built-in metrics (http_reqs, http_req_duration, ...) and their
// tags. Config.Samples receives it; a nil Config.Samples costs nothing.
type Sample struct {
	Phase, Group, Method, URL, Name string
	Status                          int
	Failed                          bool
	ErrorCode                       int
	Tags                            map[string]string
	Timings                         engine.Timings
	Sent, Received                  int64
}

// httpModule is "k6/http" in one VU. Its requests are reused from request
// to request; each Response is a small Go value, which the engine fills
// in place, shown to the script as a dynamic object whose fields are made
// only when read.
type httpModule struct {
	vu     *VU
	obj    *sobek.Object
	jsonFn sobek.Value
	// htmlFn, submitFn and clickFn are Response.html, submitForm and
	// clickLink (html.go). These four are made on first use (method).
	htmlFn, submitFn, clickFn sobek.Value
	callback                  *statusSet // the default response callback; nil marks nothing failed
	// reqs alternate from request to request: the engine's runner reuses
	// its wire request when it is handed the same *Request twice in a row,
	// and each of a script's requests is a new one.
	reqs [2]engine.Request
	next int
	// fileMark marks the objects http.file() makes (http_body.go).
	fileMark *sobek.Symbol
}

// statusSet is a response callback from http.expectedStatuses: the
// statuses that are not failures.
type statusSet struct {
	codes  map[int]bool
	ranges [][2]int
}

func (s *statusSet) expected(code int) bool {
	if s.codes[code] {
		return true
	}
	for _, r := range s.ranges {
		if code >= r[0] && code <= r[1] {
			return true
		}
	}
	return false
}

// defaultStatuses is k6's default: 200-399 are expected.
var defaultStatuses = &statusSet{ranges: [][2]int{{200, 399}}}

func newHTTPModule(vu *VU) *httpModule {
	m := &httpModule{vu: vu, callback: defaultStatuses, fileMark: sobek.NewSymbol("k6/http file")}
	m.obj = vu.rt.NewDynamicObject(&lazyObject{rt: vu.rt, shared: httpMembers, self: m})
	return m
}

// method returns a Response method's function, made on first use.
func (m *httpModule) method(v *sobek.Value, f any) sobek.Value {
	if *v == nil {
		*v = m.vu.rt.ToValue(f)
	}
	return *v
}

// httpMembers are k6/http's members, shared by every VU: each makes its
// value for a VU's module on the VU's first read (lazy.go).
var httpMembers = func() map[string]func(any) any {
	verb := func(method string, hasBody bool) func(any) any {
		return func(self any) any {
			m := self.(*httpModule)
			return func(call sobek.FunctionCall) sobek.Value {
				if hasBody {
					return m.request(method, call.Argument(0), call.Argument(1), call.Argument(2))
				}
				return m.request(method, call.Argument(0), nil, call.Argument(1))
			}
		}
	}
	t := map[string]func(any) any{
		"get":     verb(http.MethodGet, false),
		"head":    verb(http.MethodHead, false),
		"post":    verb(http.MethodPost, true),
		"put":     verb(http.MethodPut, true),
		"patch":   verb(http.MethodPatch, true),
		"del":     verb(http.MethodDelete, true),
		"options": verb(http.MethodOptions, true),
		"request": func(self any) any {
			m := self.(*httpModule)
			return func(call sobek.FunctionCall) sobek.Value {
				return m.request(strings.ToUpper(call.Argument(0).String()), call.Argument(1), call.Argument(2), call.Argument(3))
			}
		},
		"batch":            func(self any) any { return self.(*httpModule).batch },
		"file":             func(self any) any { return self.(*httpModule).file },
		"asyncRequest":     func(self any) any { return self.(*httpModule).asyncRequest },
		"expectedStatuses": func(self any) any { return self.(*httpModule).expectedStatuses },
		"setResponseCallback": func(self any) any {
			m := self.(*httpModule)
			return func(cb sobek.Value) { m.callback = m.callbackOf(cb) }
		},
		"url": func(self any) any { return self.(*httpModule).taggedURL },
		"cookieJar": func(self any) any {
			vu := self.(*httpModule).vu
			return func() *cookieJar { return vu.ownJar() }
		},
		"CookieJar": func(self any) any {
			vu := self.(*httpModule).vu
			return func(call sobek.ConstructorCall) *sobek.Object {
				return vu.rt.ToValue(vu.newJar()).ToObject(vu.rt)
			}
		},
	}
	for k, v := range httpConstants {
		t[k] = func(any) any { return v }
	}
	return t
}()

// httpConstants are k6/http's TLS version and OCSP names.
var httpConstants = map[string]string{
	"SSL_3_0": "ssl3.0", "TLS_1_0": "tls1.0", "TLS_1_1": "tls1.1", "TLS_1_2": "tls1.2", "TLS_1_3": "tls1.3",
	"OCSP_STATUS_GOOD": "good", "OCSP_STATUS_REVOKED": "revoked", "OCSP_STATUS_SERVER_FAILED": "server_failed",
	"OCSP_STATUS_UNKNOWN": "unknown", "OCSP_REASON_AA_COMPROMISE": "aa_compromise",
	"OCSP_REASON_AFFILIATION_CHANGED": "affiliation_changed", "OCSP_REASON_CA_COMPROMISE": "ca_compromise",
	"OCSP_REASON_CERTIFICATE_HOLD": "certificate_hold", "OCSP_REASON_CESSATION_OF_OPERATION": "cessation_of_operation",
	"OCSP_REASON_KEY_COMPROMISE": "key_compromise", "OCSP_REASON_PRIVILEGE_WITHDRAWN": "privilege_withdrawn",
	"OCSP_REASON_REMOVE_FROM_CRL": "remove_from_crl", "OCSP_REASON_SUPERSEDED": "superseded",
	"OCSP_REASON_UNSPECIFIED": "unspecified",
}

// taggedURL is the http.url tagged template: the URL, and one name tag
// for every URL it makes, its placeholders shown as ${}.
func (m *httpModule) taggedURL(call sobek.FunctionCall) sobek.Value {
	strs, ok := call.Argument(0).(*sobek.Object)
	if !ok {
		m.vu.throw("http.url is a tagged template: http.url`https://host/items/${id}`")
	}
	n := int(strs.Get("length").ToInteger())
	var u, name strings.Builder
	for i := range n {
		part := strs.Get(strconv.Itoa(i)).String()
		u.WriteString(part)
		name.WriteString(part)
		if i+1 < n {
			u.WriteString(call.Argument(i + 1).String())
			name.WriteString("${}")
		}
	}
	o := m.vu.rt.NewObject()
	_ = o.Set("url", u.String())
	_ = o.Set("name", name.String())
	return o
}

// expectedStatuses(200, {min: 300, max: 399}, ...) makes a response callback.
func (m *httpModule) expectedStatuses(call sobek.FunctionCall) sobek.Value {
	s := &statusSet{codes: map[int]bool{}}
	for _, a := range call.Arguments {
		if o, ok := a.(*sobek.Object); ok {
			lo, hi := o.Get("min"), o.Get("max")
			if lo == nil || hi == nil {
				m.vu.throw("http.expectedStatuses: want status codes or {min, max}, got %v", a)
			}
			s.ranges = append(s.ranges, [2]int{int(lo.ToInteger()), int(hi.ToInteger())})
			continue
		}
		n := a.ToFloat()
		if n != float64(int(n)) {
			m.vu.throw("http.expectedStatuses: %v is not a status code", a)
		}
		s.codes[int(n)] = true
	}
	return m.vu.rt.ToValue(s)
}

// callbackOf reads a responseCallback value: expectedStatuses' result, or
// null for none.
func (m *httpModule) callbackOf(v sobek.Value) *statusSet {
	if sobek.IsNull(v) {
		return nil
	}
	if s, ok := v.Export().(*statusSet); ok {
		return s
	}
	m.vu.throw("responseCallback: want the result of http.expectedStatuses(...) or null")
	return nil
}

// reqInfo is what a request's params say about its response: its
// callback, response type, tags, name tag and cookie jar.
type reqInfo struct {
	cb       *statusSet
	respType string
	tags     map[string]string
	name     string
	jar      *cookieJar // nil: the VU's own
	// digest: params.auth is "digest" (http_body.go).
	digest bool
}

// prepare fills req from the script's arguments and returns what its
// params say about its response.
func (m *httpModule) prepare(req *engine.Request, method string, u, body, params sobek.Value) (info reqInfo) {
	vu := m.vu
	*req = engine.Request{Method: method, Timeout: vu.r.cfg.Timeout, Redirects: DefaultRedirects}
	req.URL, info.name = urlOf(u)
	info.cb, info.respType = m.callback, "text"
	var cookies *sobek.Object
	compression := ""
	if p, ok := params.(*sobek.Object); ok {
		for _, k := range p.Keys() {
			v := p.Get(k)
			switch k {
			case "headers":
				if h, ok := v.(*sobek.Object); ok {
					req.Header = make(http.Header, len(h.Keys()))
					for _, hk := range h.Keys() {
						req.Header.Set(hk, h.Get(hk).String())
					}
				}
			case "tags":
				if t, ok := v.(*sobek.Object); ok {
					info.tags = map[string]string{}
					for _, tk := range t.Keys() {
						info.tags[tk] = t.Get(tk).String()
					}
					if n, ok := info.tags["name"]; ok {
						info.name = n
					}
				}
			case "timeout":
				d, err := jsDuration(v)
				if err != nil || d <= 0 {
					vu.throw("params.timeout: want a duration such as \"10s\" or milliseconds > 0, got %v", v)
				}
				req.Timeout = d
			case "redirects":
				req.Redirects = int(v.ToInteger())
			case "responseType":
				switch info.respType = v.String(); info.respType {
				case "text", "binary", "none":
				default:
					vu.throw("params.responseType: want text, binary or none, got %q", info.respType)
				}
			case "responseCallback":
				info.cb = m.callbackOf(v)
			case "cookies":
				cookies, _ = v.(*sobek.Object)
			case "jar":
				info.jar = vu.jarOf(v)
			case "auth": // http_body.go
				info.digest = m.authMethod(v)
			case "compression": // http_body.go
				compression = v.String()
			}
		}
	}
	if body != nil && !sobek.IsUndefined(body) && !sobek.IsNull(body) {
		req.Body = m.body(req, body)
	}
	if compression != "" && req.Body != nil {
		m.compress(req, compression)
	}
	vu.addCookies(req, info.jar, cookies)
	vu.r.requestOptions(req, &info, params) // httpoptions.go
	// A body the script will not read is dropped as it arrives.
	req.DiscardBody, req.KeepHeader = info.respType == "none", true
	return info
}

// urlOf reads a URL argument: a string, or http.url's {url, name} object.
func urlOf(v sobek.Value) (u, name string) {
	if o, ok := v.(*sobek.Object); ok {
		if s := o.Get("url"); s != nil {
			u = s.String()
			if n := o.Get("name"); n != nil {
				return u, n.String()
			}
			return u, u
		}
	}
	u = v.String()
	return u, u
}

// body reads a request body: a string, an ArrayBuffer, or an object sent
// form-encoded (as k6 does).
func (m *httpModule) body(req *engine.Request, v sobek.Value) []byte {
	if o, ok := v.(*sobek.Object); ok {
		switch v.Export().(type) {
		case sobek.ArrayBuffer, []byte:
			return m.vu.bytes(v)
		case map[string]any:
			if m.hasFile(o) { // http_body.go
				return m.multipartBody(req, o)
			}
			form := url.Values{}
			keys := o.Keys()
			sort.Strings(keys)
			for _, k := range keys {
				form.Set(k, o.Get(k).String())
			}
			if req.Header == nil {
				req.Header = http.Header{}
			}
			if req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			return []byte(form.Encode())
		}
		return m.vu.bytes(v)
	}
	return []byte(v.String())
}

// request sends one request and returns its Response.
func (m *httpModule) request(method string, u, body, params sobek.Value) sobek.Value {
	if m.vu.inInit {
		m.vu.throw("http requests cannot be made in the init context (use setup())")
	}
	m.vu.noteStack()
	req := &m.reqs[m.next]
	info := m.prepare(req, method, u, body, params)
	// Only a request that goes out moves to the other slot: after params
	// that throw, the next request must not be the slot the runner last
	// sent, or it would resend that request's wire form. A request whose
	// wire form is the last one's goes out in the last one's slot instead,
	// so that the runner sends the form it built then (as it does for a
	// targets file's requests) rather than building the same one again.
	if last := &m.reqs[m.next^1]; sameWire(req, last) {
		*last = *req
		req = last
	} else {
		m.next ^= 1
	}
	if info.digest {
		return m.digestRequest(req, &info) // http_body.go
	}
	s := m.lane(0)
	s.cb = info.cb
	// The engine fills the Response's engine.Response in place: nothing
	// is copied, and the module keeps nothing of the answer between
	// requests.
	r := &response{m: m, method: req.Method, respType: info.respType}
	out := s.runner.Iterate(req, time.Time{}, &r.res)
	v := m.resolved(req, r, out, &info)
	if err := m.thrown(req, &r.res, out); err != nil {
		m.vu.throw("%v", err)
	}
	return v
}

// lane is the VU's i-th request lane; a lane that cannot be made (a bad
// TLS setting) is the script's error.
func (m *httpModule) lane(i int) *slot {
	s, err := m.vu.slot(i)
	if err != nil {
		panic(m.vu.rt.NewGoError(err))
	}
	return s
}

// resolve makes the script's Response of an attempt the engine's runner
// sent, judged and counted into the phase's attempt plane; a failed one
// fails the iteration.
func (m *httpModule) resolve(req *engine.Request, res *engine.Response, out engine.Outcome, info *reqInfo) sobek.Value {
	return m.resolved(req, &response{m: m, res: *res, method: req.Method, respType: info.respType}, out, info)
}

// resolved is resolve of the Response r, whose res the attempt filled.
func (m *httpModule) resolved(req *engine.Request, r *response, out engine.Outcome, info *reqInfo) sobek.Value {
	vu := m.vu
	tags, name := info.tags, info.name
	res := &r.res
	m.debugDump(req, res)
	vu.storeCookies(info.jar, res)
	if out == engine.IterationAborted {
		// Cut off by the phase's own stop: not the target's doing, and not
		// counted as ok or failed.
		return vu.rt.NewDynamicObject(r)
	}
	// Every redirect followed was a request of its own: k6 counts and
	// times each (a redirect loop of 1 + maxRedirects requests is that
	// many http_reqs). The last response's bytes are what the hops leave.
	sent, recv := res.BytesSent, res.BytesReceived
	for _, h := range res.Hops {
		hopName := name
		if name == req.URL { // no name given: each hop is named by its URL
			hopName = h.URL
		}
		m.record(h.Method, h.URL, hopName, tags, h.Status, 0, h.Failed, h.Timings, h.BytesSent, h.BytesReceived)
		sent, recv = sent-h.BytesSent, recv-h.BytesReceived
	}
	m.record(req.Method, req.URL, name, tags, res.Status, res.ErrorCode, res.Failed, res.Timings, sent, recv)
	if res.Failed {
		vu.failed = true
	}
	return vu.rt.NewDynamicObject(r)
}

// record counts one request on the wire in k6's built-in metrics and the
// run's samples. setup's and teardown's requests count too, as in k6, in
// no scenario.
func (m *httpModule) record(method, url, name string, tags map[string]string, status, code int, failed bool, tm engine.Timings, sent, recv int64) {
	vu := m.vu
	var ts tagSet
	vu.r.builtin.request(vu.phaseName(), tm, failed, int(sent), int(recv), func() map[string]string {
		t := vu.fillTags(ts.get(), nil)
		t["method"], t["url"], t["name"] = method, url, name
		t["status"], t["expected_response"] = statusTag(status), strconv.FormatBool(!failed)
		for k, v := range tags {
			t[k] = v
		}
		return vu.r.dropSystemTags(t, len(tags) > 0 || vu.namedTags(nil))
	})
	ts.release()
	if p := vu.ph; p != nil {
		if s := vu.r.cfg.Samples; s != nil {
			s(&Sample{Phase: p.sc.Name, Group: vu.group, Method: method, URL: url, Name: name, Status: status,
				Failed: failed, ErrorCode: code, Tags: tags, Timings: tm, Sent: sent, Received: recv})
		}
	}
}

// statusTags are the status tags of the codes 100-599, made on first
// use: a tagged request's status tag is then not a string of its own.
var statusTags = sync.OnceValue(func() *[500]string {
	t := new([500]string)
	for i := range t {
		t[i] = strconv.Itoa(100 + i)
	}
	return t
})

// statusTag is a request's status tag: its code ("0" when none came).
func statusTag(code int) string {
	if code >= 100 && code < 600 {
		return statusTags()[code-100]
	}
	return strconv.Itoa(code)
}

// json is Response.json([selector]).
func (m *httpModule) json(call sobek.FunctionCall) sobek.Value {
	r, ok := call.This.Export().(*response)
	if !ok {
		m.vu.throw("json() must be called on a Response")
	}
	if r.res.Body == nil {
		m.vu.throw("json(): the response has no body")
	}
	v, err := m.vu.parseJSON(string(r.res.Body))
	if err != nil {
		panic(m.vu.rt.NewGoError(err))
	}
	if sel := call.Argument(0); !sobek.IsUndefined(sel) {
		for _, part := range strings.Split(sel.String(), ".") {
			o, ok := v.(*sobek.Object)
			if !ok {
				return sobek.Undefined()
			}
			if v = o.Get(part); v == nil {
				return sobek.Undefined()
			}
		}
	}
	return v
}

// response is k6's Response: status, status_text, body, headers, json(),
// timings, error, error_code, url, proto, request. Fields are built when
// the script first reads them, so a script that looks only at status pays
// for nothing else.
type response struct {
	m        *httpModule
	res      engine.Response
	method   string
	respType string
	cache    map[string]sobek.Value
}

var responseKeys = []string{"status", "status_text", "body", "headers", "cookies", "timings", "error", "error_code", "url", "proto", "request", "json", "html", "submitForm", "clickLink"}

func (r *response) Get(key string) sobek.Value {
	rt := r.m.vu.rt
	switch key {
	case "status":
		return rt.ToValue(r.res.Status)
	case "error_code":
		return rt.ToValue(r.res.ErrorCode)
	case "json":
		return r.m.method(&r.m.jsonFn, r.m.json)
	case "html":
		return r.m.method(&r.m.htmlFn, r.m.htmlOf)
	case "submitForm":
		return r.m.method(&r.m.submitFn, r.m.submitForm)
	case "clickLink":
		return r.m.method(&r.m.clickFn, r.m.clickLink)
	case "url":
		return rt.ToValue(r.res.URL)
	case "proto":
		return rt.ToValue(r.res.Proto)
	case "error":
		if r.res.Err != nil {
			return rt.ToValue(r.res.Err.Error())
		}
		return rt.ToValue("")
	case "status_text":
		if r.res.Status == 0 {
			return rt.ToValue("")
		}
		return rt.ToValue(strconv.Itoa(r.res.Status) + " " + http.StatusText(r.res.Status))
	}
	if v, ok := r.cache[key]; ok {
		return v
	}
	var v sobek.Value
	switch key {
	case "body":
		switch {
		case r.respType == "none" || r.res.Err != nil && r.res.Body == nil:
			v = sobek.Null()
		case r.respType == "binary":
			v = rt.ToValue(rt.NewArrayBuffer(r.res.Body))
		default:
			v = rt.ToValue(string(r.res.Body))
		}
	case "headers":
		h := rt.NewObject()
		for k, vs := range r.res.Headers() {
			_ = h.Set(k, strings.Join(vs, ", "))
		}
		v = h
	case "cookies":
		v = r.m.vu.responseCookies(r.res.Headers())
	case "timings":
		t := rt.NewObject()
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		tm := r.res.Timings
		for k, d := range map[string]time.Duration{"blocked": tm.Blocked, "connecting": tm.Connecting, "tls_handshaking": tm.TLSHandshaking,
			"sending": tm.Sending, "waiting": tm.Waiting, "receiving": tm.Receiving, "duration": tm.Duration} {
			_ = t.Set(k, ms(d))
		}
		v = t
	case "request":
		q := rt.NewObject()
		_ = q.Set("method", r.method)
		_ = q.Set("url", r.res.URL)
		v = q
	default:
		return nil
	}
	if r.cache == nil {
		r.cache = map[string]sobek.Value{}
	}
	r.cache[key] = v
	return v
}

// Set stores a script's own property on the Response.
func (r *response) Set(key string, v sobek.Value) bool {
	if r.cache == nil {
		r.cache = map[string]sobek.Value{}
	}
	r.cache[key] = v
	return true
}

func (r *response) Has(key string) bool {
	for _, k := range responseKeys {
		if k == key {
			return true
		}
	}
	_, ok := r.cache[key]
	return ok
}

func (r *response) Delete(key string) bool {
	delete(r.cache, key)
	return true
}

func (r *response) Keys() []string { return responseKeys }
