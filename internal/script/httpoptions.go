package script

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unsafe"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// requestOptions applies the run's k6 options to a request its params have
// prepared, where the params do not say otherwise: maxRedirects,
// discardResponseBodies, userAgent, hosts and noConnectionReuse.
func (r *Runner) requestOptions(req *engine.Request, info *reqInfo, params sobek.Value) {
	p, _ := params.(*sobek.Object)
	o := &r.opts
	if !given(p, "redirects") {
		req.Redirects = o.MaxRedirects
	}
	if o.DiscardResponseBodies && !given(p, "responseType") {
		info.respType = "none"
	}
	if req.Header == nil {
		// No header of its own: the run's defaults, one map shared by every
		// request and only read from here on (a digest retry and a redirect
		// that drops Host clone it before they change it).
		req.Header = r.defaultHeader()
	} else {
		if o.UserAgent != "" && req.Header.Get("User-Agent") == "" {
			setHeader(req, "User-Agent", o.UserAgent)
		}
		if o.NoConnectionReuse {
			setHeader(req, "Connection", "close")
		}
	}
	if len(o.Hosts) > 0 {
		r.dialHost(req)
	}
}

// given says whether params p sets key k (to anything but undefined).
func given(p *sobek.Object, k string) bool {
	if p == nil {
		return false
	}
	v := p.Get(k)
	return v != nil && !sobek.IsUndefined(v)
}

// defaultHeader is the header of a request whose params and cookies set
// none: options.userAgent and noConnectionReuse's Connection: close, nil
// when neither applies. Made once per run; callers must not change it.
func (r *Runner) defaultHeader() http.Header {
	r.defaultHdrOnce.Do(func() {
		h := http.Header{}
		if r.opts.UserAgent != "" {
			h.Set("User-Agent", r.opts.UserAgent)
		}
		if r.opts.NoConnectionReuse {
			h.Set("Connection", "close")
		}
		if len(h) > 0 {
			r.defaultHdr = h
		}
	})
	return r.defaultHdr
}

// sameWire says whether a and b make the same wire request: the same
// method, URL and Host, no body, and the same header map (nil, or the
// run's shared default header, which nothing changes).
func sameWire(a, b *engine.Request) bool {
	return a.Method == b.Method && a.URL == b.URL && a.Host == b.Host && a.Body == nil && b.Body == nil &&
		sameMap(a.Header, b.Header)
}

// sameMap reports whether a and b are the same map (or both nil): a map
// value is one pointer, compared here without reflect's Value (about 60
// instructions a request).
func sameMap(a, b http.Header) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

func setHeader(req *engine.Request, k, v string) {
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set(k, v)
}

// dialHost sends a request to the address options.hosts gives its host
// (by name:port, then by name), with the Host header the URL named.
func (r *Runner) dialHost(req *engine.Request) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return
	}
	to, ok := r.opts.Hosts[u.Host]
	if !ok {
		if to, ok = r.opts.Hosts[u.Hostname()]; ok && u.Port() != "" {
			if _, _, hasPort := cutPort(to); !hasPort {
				to += ":" + u.Port()
			}
		}
	}
	if !ok {
		return
	}
	if req.Host == "" {
		req.Host = u.Host
	}
	u.Host = to
	req.URL = u.String()
}

// cutPort splits "ip:port"; hasPort is false for a bare address.
func cutPort(addr string) (host, port string, hasPort bool) {
	u := url.URL{Host: addr}
	if u.Port() == "" {
		return addr, "", false
	}
	return u.Hostname(), u.Port(), true
}

// thrown is the exception a request that failed to go out throws under
// the throw option (k6's --throw), worded as Go's client words it
// (`Get "http://…": dial tcp …`): nil when it went out, or throw is off.
// An attempt the phase cut off throws nothing.
func (m *httpModule) thrown(req *engine.Request, res *engine.Response, out engine.Outcome) error {
	if !m.vu.r.opts.Throw || res.Err == nil || out == engine.IterationAborted {
		return nil
	}
	op := strings.ToUpper(req.Method)
	if op == "" {
		op = http.MethodGet
	}
	op = op[:1] + strings.ToLower(op[1:])
	u := res.URL
	if u == "" {
		u = req.URL
	}
	return &url.Error{Op: op, URL: u, Err: res.Err}
}

// debugDump writes a request and its response as httpDebug asks
// (k6's --http-debug): the request line and headers, then the status
// line and headers, each followed by its body with "full".
func (m *httpModule) debugDump(req *engine.Request, res *engine.Response) {
	mode := m.vu.r.opts.HTTPDebug
	if mode == "" {
		return
	}
	var b strings.Builder
	method, path, host := req.Method, req.URL, req.Host
	if method == "" {
		method = http.MethodGet
	}
	if u, err := url.Parse(req.URL); err == nil {
		path = u.RequestURI()
		if host == "" {
			host = u.Host
		}
	}
	fmt.Fprintf(&b, "Request:\n%s %s HTTP/1.1\nHost: %s\n", method, path, host)
	writeHeaders(&b, req.Header, "Host")
	b.WriteString("\n")
	if mode == "full" && len(req.Body) > 0 {
		b.Write(req.Body)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if res.Err != nil {
		fmt.Fprintf(&b, "Response:\n(no response: %v)\n", res.Err)
	} else {
		proto := res.Proto
		if proto == "" {
			proto = "HTTP/1.1"
		}
		fmt.Fprintf(&b, "Response:\n%s %d %s\n", proto, res.Status, http.StatusText(res.Status))
		writeHeaders(&b, res.Headers(), "")
		if mode == "full" && len(res.Body) > 0 {
			b.WriteString("\n")
			b.Write(res.Body)
			b.WriteString("\n")
		}
	}
	m.vu.r.cfg.HTTPDebug(b.String())
}

// writeHeaders writes h's fields, sorted, one "Name: value" line each,
// skipping skip.
func writeHeaders(b *strings.Builder, h http.Header, skip string) {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if k == skip {
			continue
		}
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
}
