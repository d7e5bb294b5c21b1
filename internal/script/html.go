package script

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/k6html"
)

// html is the VU's k6/html, made on first use.
func (vu *VU) html() *k6html.Module {
	if vu.htmlMod == nil {
		vu.htmlMod = k6html.New(vu.rt)
	}
	return vu.htmlMod
}

// responseOf is the Response a Response method is called on.
func (m *httpModule) responseOf(call sobek.FunctionCall, method string) *response {
	r, ok := call.This.Export().(*response)
	if !ok {
		m.vu.throw("%s() must be called on a Response", method)
	}
	return r
}

// htmlOf is Response.html([selector]): the body parsed as HTML, the
// selector's matches if one is given.
func (m *httpModule) htmlOf(call sobek.FunctionCall) sobek.Value {
	r := m.responseOf(call, "html")
	doc := m.vu.html().Parse(string(r.res.Body))
	if sel := call.Argument(0); !sobek.IsUndefined(sel) {
		return m.vu.rt.ToValue(doc.Find(sel.String()))
	}
	return m.vu.rt.ToValue(doc)
}

// optionsArg reads a submitForm/clickLink options object: a string field
// (or def) and the object itself.
func optionsArg(v sobek.Value) *sobek.Object {
	o, _ := v.(*sobek.Object)
	return o
}

func stringOpt(o *sobek.Object, key, def string) string {
	if o == nil {
		return def
	}
	if v := o.Get(key); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
		return v.String()
	}
	return def
}

func valueOpt(o *sobek.Object, key string) sobek.Value {
	if o == nil {
		return nil
	}
	return o.Get(key)
}

// resolveRef is href or action resolved against the response's URL.
func (m *httpModule) resolveRef(r *response, ref string) string {
	base, err := url.Parse(r.res.URL)
	if err != nil {
		m.vu.throw("cannot resolve %q against the response's URL %q", ref, r.res.URL)
	}
	u, err := base.Parse(ref)
	if err != nil {
		m.vu.throw("cannot resolve %q: %v", ref, err)
	}
	return u.String()
}

// submitForm is Response.submitForm({formSelector, fields,
// submitSelector, submitSelectorAttribute, params}): the form found in
// the body is submitted with its fields, the submit button's and the
// given ones, to its action by its method, as a browser does.
func (m *httpModule) submitForm(call sobek.FunctionCall) sobek.Value {
	r := m.responseOf(call, "submitForm")
	opts := optionsArg(call.Argument(0))
	formSel := stringOpt(opts, "formSelector", "form")
	form := m.vu.html().Parse(string(r.res.Body)).Find(formSel).Sel().First()
	if form.Size() == 0 {
		m.vu.throw("submitForm: no form matches %q", formSel)
	}
	action := m.resolveRef(r, form.AttrOr("action", ""))
	method := strings.ToUpper(form.AttrOr("method", http.MethodGet))
	values := url.Values{}
	for _, f := range k6html.FormFields(form) {
		values.Add(f[0], f[1])
	}
	submitSel := stringOpt(opts, "submitSelector", `[type="submit"]`)
	if btn := form.Find(submitSel).First(); btn.Size() > 0 {
		if name, ok := btn.Attr("name"); ok && name != "" {
			values.Set(name, btn.AttrOr(stringOpt(opts, "submitSelectorAttribute", "value"), ""))
		}
	}
	if fields, ok := valueOpt(opts, "fields").(*sobek.Object); ok {
		for _, k := range fields.Keys() {
			values.Set(k, fields.Get(k).String())
		}
	}
	params := valueOpt(opts, "params")
	if method == http.MethodGet {
		u, err := url.Parse(action)
		if err != nil {
			m.vu.throw("submitForm: %v", err)
		}
		u.RawQuery = values.Encode()
		return m.request(method, m.vu.rt.ToValue(u.String()), nil, params)
	}
	body := m.vu.rt.NewObject()
	for k := range values {
		_ = body.Set(k, values.Get(k))
	}
	return m.request(method, m.vu.rt.ToValue(action), body, params)
}

// clickLink is Response.clickLink({selector, params}): a GET of the
// first matching link's href, resolved against the response's URL.
func (m *httpModule) clickLink(call sobek.FunctionCall) sobek.Value {
	r := m.responseOf(call, "clickLink")
	opts := optionsArg(call.Argument(0))
	sel := stringOpt(opts, "selector", "a[href]")
	link := m.vu.html().Parse(string(r.res.Body)).Find(sel).Sel().First()
	href, ok := link.Attr("href")
	if !ok {
		m.vu.throw("clickLink: no link with an href matches %q", sel)
	}
	return m.request(http.MethodGet, m.vu.rt.ToValue(m.resolveRef(r, href)), nil, valueOpt(opts, "params"))
}
