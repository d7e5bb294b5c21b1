package script

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/grafana/sobek"
	"golang.org/x/net/publicsuffix"

	"github.com/throttlekit/throttle/internal/engine"
)

// cookieJar is a k6 cookie jar: the VU's own (http.cookieJar()), or one
// the script makes (new http.CookieJar()) and hands a request as
// params.jar. It is the standard library's jar with the public-suffix
// list; the object stays the same across iterations, its contents are
// replaced when the VU's jar is emptied.
type cookieJar struct {
	vu  *VU
	jar *cookiejar.Jar
	// stored is set once a cookie went in: until then a request reads
	// nothing from the jar (no URL parse for a script without cookies).
	stored bool
}

func (vu *VU) newJar() *cookieJar {
	j, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	return &cookieJar{vu: vu, jar: j}
}

// ownJar is the VU's jar, made on first use.
func (vu *VU) ownJar() *cookieJar {
	if vu.jar == nil {
		vu.jar = vu.newJar()
	}
	return vu.jar
}

// resetCookies empties the VU's jar at the start of an iteration, as k6
// does unless options.noCookiesReset.
func (vu *VU) resetCookies() {
	if j := vu.jar; j != nil && j.stored && !vu.r.opts.NoCookiesReset {
		fresh, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
		j.jar, j.stored = fresh, false
	}
}

// jarOf reads params.jar.
func (vu *VU) jarOf(v sobek.Value) *cookieJar {
	if j, ok := v.Export().(*cookieJar); ok {
		return j
	}
	vu.throw("params.jar: want a cookie jar (http.cookieJar() or new http.CookieJar()), got %v", v)
	return nil
}

// addCookies sets the request's Cookie header: the jar's cookies for its
// URL, then params.cookies (name: value, or name: {value, replace}; a
// replacing one drops the jar's cookies of that name).
func (vu *VU) addCookies(req *engine.Request, jar *cookieJar, params *sobek.Object) {
	if jar == nil {
		jar = vu.jar
	}
	if params == nil && (jar == nil || !jar.stored) {
		return
	}
	var pairs []string
	replaced := map[string]bool{}
	var own []string
	if params != nil {
		for _, name := range params.Keys() {
			v := params.Get(name)
			value := v.String()
			if o, ok := v.(*sobek.Object); ok {
				value = o.Get("value").String()
				if r := o.Get("replace"); r != nil && r.ToBoolean() {
					replaced[name] = true
				}
			}
			own = append(own, (&http.Cookie{Name: name, Value: value}).String())
		}
	}
	if jar != nil && jar.stored {
		if u, err := url.Parse(req.URL); err == nil {
			for _, c := range jar.jar.Cookies(u) {
				if !replaced[c.Name] {
					pairs = append(pairs, c.Name+"="+c.Value)
				}
			}
		}
	}
	pairs = append(pairs, own...)
	if len(pairs) == 0 {
		return
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if prev := req.Header.Get("Cookie"); prev != "" {
		pairs = append([]string{prev}, pairs...)
	}
	req.Header.Set("Cookie", strings.Join(pairs, "; "))
}

// storeCookies keeps a response's Set-Cookie cookies in the request's
// jar (the VU's unless params.jar named another).
func (vu *VU) storeCookies(jar *cookieJar, res *engine.Response) {
	lines := res.HeaderValues("Set-Cookie")
	if len(lines) == 0 {
		return
	}
	u, err := url.Parse(res.URL)
	if err != nil {
		return
	}
	if jar == nil {
		jar = vu.ownJar()
	}
	jar.add(u, (&http.Response{Header: http.Header{"Set-Cookie": lines}}).Cookies())
}

func (j *cookieJar) add(u *url.URL, cs []*http.Cookie) {
	if len(cs) > 0 {
		j.jar.SetCookies(u, cs)
		j.stored = true
	}
}

// responseCookies is Response.cookies: name → [{name, value, domain,
// path, expires (ms since the epoch, 0 for none), max_age, secure,
// http_only}], from its Set-Cookie headers.
func (vu *VU) responseCookies(h http.Header) *sobek.Object {
	rt := vu.rt
	out := rt.NewObject()
	lists := map[string][]any{}
	var order []string
	for _, c := range (&http.Response{Header: h}).Cookies() {
		var expires int64
		if !c.Expires.IsZero() {
			expires = c.Expires.UnixMilli()
		}
		if _, ok := lists[c.Name]; !ok {
			order = append(order, c.Name)
		}
		lists[c.Name] = append(lists[c.Name], map[string]any{
			"name": c.Name, "value": c.Value, "domain": c.Domain, "path": c.Path, "expires": expires,
			"max_age": c.MaxAge, "secure": c.Secure, "http_only": c.HttpOnly,
		})
	}
	for _, name := range order {
		_ = out.Set(name, lists[name])
	}
	return out
}

// parseURL reads a jar method's URL argument.
func (j *cookieJar) parseURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		j.vu.throw("cookie jar: %q is not an absolute URL", s)
	}
	return u
}

// Set is jar.set(url, name, value[, {domain, path, expires, max_age,
// secure, http_only}]).
func (j *cookieJar) Set(rawURL, name, value string, opts sobek.Value) {
	u := j.parseURL(rawURL)
	c := &http.Cookie{Name: name, Value: value}
	if o, ok := opts.(*sobek.Object); ok {
		for _, k := range o.Keys() {
			v := o.Get(k)
			switch k {
			case "domain":
				c.Domain = v.String()
			case "path":
				c.Path = v.String()
			case "expires":
				t, err := http.ParseTime(v.String())
				if err != nil {
					j.vu.throw("cookie jar: expires: want an RFC 1123 date, got %q", v.String())
				}
				c.Expires = t
			case "max_age":
				c.MaxAge = int(v.ToInteger())
			case "secure":
				c.Secure = v.ToBoolean()
			case "http_only":
				c.HttpOnly = v.ToBoolean()
			default:
				j.vu.throw("cookie jar: unknown cookie option %q (want domain, path, expires, max_age, secure, http_only)", k)
			}
		}
	}
	j.add(u, []*http.Cookie{c})
}

// CookiesForURL is jar.cookiesForURL(url): name → [values] of the cookies
// a request to url would send, in the order it sends them.
func (j *cookieJar) CookiesForURL(rawURL string) *sobek.Object {
	vals := map[string][]string{}
	var order []string
	for _, c := range j.jar.Cookies(j.parseURL(rawURL)) {
		if _, ok := vals[c.Name]; !ok {
			order = append(order, c.Name)
		}
		vals[c.Name] = append(vals[c.Name], c.Value)
	}
	out := j.vu.rt.NewObject()
	for _, name := range order {
		_ = out.Set(name, vals[name])
	}
	return out
}

// Delete is jar.delete(url, name): the cookie of that name a request to
// url would send is dropped. The standard jar removes a cookie set again
// expired under the same domain and path, so it is expired under each
// domain and path that could hold it.
func (j *cookieJar) Delete(rawURL, name string) {
	u := j.parseURL(rawURL)
	host := u.Hostname()
	domains := []string{""}
	for d := host; strings.Contains(d, "."); d = d[strings.IndexByte(d, '.')+1:] {
		domains = append(domains, d)
	}
	paths := []string{"/"}
	p := ""
	for _, seg := range strings.Split(strings.Trim(u.EscapedPath(), "/"), "/") {
		if seg != "" {
			p += "/" + seg
			paths = append(paths, p)
		}
	}
	var gone []*http.Cookie
	for _, d := range domains {
		for _, p := range paths {
			gone = append(gone, &http.Cookie{Name: name, Domain: d, Path: p, MaxAge: -1})
		}
	}
	j.jar.SetCookies(u, gone)
}

// Clear is jar.clear(url): every cookie a request to url would send is
// dropped.
func (j *cookieJar) Clear(rawURL string) {
	for _, c := range j.jar.Cookies(j.parseURL(rawURL)) {
		j.Delete(rawURL, c.Name)
	}
}
