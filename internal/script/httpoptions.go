package script

import (
	"net/http"
	"net/url"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/engine"
)

// requestOptions applies the run's k6 options to a request its params have
// prepared, where the params do not say otherwise: maxRedirects,
// discardResponseBodies, userAgent, hosts and noConnectionReuse.
func (r *Runner) requestOptions(req *engine.Request, info *reqInfo, params sobek.Value) {
	p, _ := params.(*sobek.Object)
	given := func(k string) bool {
		if p == nil {
			return false
		}
		v := p.Get(k)
		return v != nil && !sobek.IsUndefined(v)
	}
	o := &r.opts
	if !given("redirects") {
		req.Redirects = o.MaxRedirects
	}
	if !given("responseType") && o.DiscardResponseBodies {
		info.respType = "none"
	}
	if o.UserAgent != "" && req.Header.Get("User-Agent") == "" {
		setHeader(req, "User-Agent", o.UserAgent)
	}
	if o.NoConnectionReuse {
		setHeader(req, "Connection", "close")
	}
	if len(o.Hosts) > 0 {
		r.dialHost(req)
	}
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
