// Package k6html is k6's k6/html module on goquery: parseHTML and the
// Selection and Element methods @types/k6 lists, shown to a script of one
// sobek runtime.
package k6html

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"
	"golang.org/x/net/html"
)

// Module is k6/html in one runtime.
type Module struct{ rt *sobek.Runtime }

// New is k6/html for rt.
func New(rt *sobek.Runtime) *Module { return &Module{rt: rt} }

// Object is the module's object: parseHTML, and NodeType (the numbers
// Element.nodeType() gives, by name, as @types/k6 declares the enum).
func (m *Module) Object() *sobek.Object {
	o := m.rt.NewObject()
	_ = o.Set("parseHTML", func(src string) *Selection { return m.Parse(src) })
	_ = o.Set("NodeType", map[string]int{"ElementNode": 1, "TextNode": 3, "CommentNode": 8, "DocumentNode": 9, "DoctypeNode": 10})
	return o
}

// Parse is parseHTML(src): the document as a Selection.
func (m *Module) Parse(src string) *Selection {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(src))
	if err != nil {
		panic(m.rt.NewGoError(fmt.Errorf("parseHTML: %w", err)))
	}
	return m.wrap(doc.Selection)
}

// Selection is k6's Selection: a goquery selection whose methods the
// script calls by their lower-case names.
type Selection struct {
	m   *Module
	sel *goquery.Selection
}

// Sel is the goquery selection (res.submitForm and clickLink read it).
func (s *Selection) Sel() *goquery.Selection { return s.sel }

func (m *Module) wrap(sel *goquery.Selection) *Selection { return &Selection{m: m, sel: sel} }

func (s *Selection) wrap(sel *goquery.Selection) *Selection { return s.m.wrap(sel) }

// given is whether an optional argument was passed.
func given(v sobek.Value) bool { return v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) }

func (s *Selection) throw(format string, args ...any) {
	panic(s.m.rt.NewGoError(fmt.Errorf(format, args...)))
}

// Attr is attr(name[, default]): the first element's attribute, the
// default (or undefined) when it has none.
func (s *Selection) Attr(name string, def sobek.Value) sobek.Value {
	if v, ok := s.sel.Attr(name); ok {
		return s.m.rt.ToValue(v)
	}
	if given(def) {
		return def
	}
	return sobek.Undefined()
}

func (s *Selection) Children(sel sobek.Value) *Selection {
	if given(sel) {
		return s.wrap(s.sel.ChildrenFiltered(sel.String()))
	}
	return s.wrap(s.sel.Children())
}

func (s *Selection) Closest(sel string) *Selection { return s.wrap(s.sel.Closest(sel)) }
func (s *Selection) Contents() *Selection          { return s.wrap(s.sel.Contents()) }
func (s *Selection) Eq(i int) *Selection           { return s.wrap(s.sel.Eq(i)) }
func (s *Selection) Find(sel string) *Selection    { return s.wrap(s.sel.Find(sel)) }
func (s *Selection) First() *Selection             { return s.wrap(s.sel.First()) }
func (s *Selection) Last() *Selection              { return s.wrap(s.sel.Last()) }
func (s *Selection) Has(sel string) *Selection     { return s.wrap(s.sel.Has(sel)) }
func (s *Selection) Size() int                     { return s.sel.Size() }
func (s *Selection) Text() string                  { return s.sel.Text() }

// Html is html(): the first element's inner HTML.
func (s *Selection) Html() sobek.Value {
	h, err := s.sel.Html()
	if err != nil || s.sel.Size() == 0 {
		return sobek.Undefined()
	}
	return s.m.rt.ToValue(h)
}

// Data is data([key]): the first element's data-* attributes, values read
// as JSON where they are (numbers, booleans, objects), as jQuery does.
func (s *Selection) Data(key sobek.Value) sobek.Value {
	if s.sel.Size() == 0 {
		return sobek.Undefined()
	}
	convert := func(v string) any {
		var out any
		if json.Unmarshal([]byte(v), &out) == nil {
			return out
		}
		return v
	}
	if given(key) {
		v, ok := s.sel.Attr("data-" + key.String())
		if !ok {
			return sobek.Undefined()
		}
		return s.m.rt.ToValue(convert(v))
	}
	all := map[string]any{}
	for _, a := range s.sel.Get(0).Attr {
		if name, ok := strings.CutPrefix(a.Key, "data-"); ok {
			all[camel(name)] = convert(a.Val)
		}
	}
	return s.m.rt.ToValue(all)
}

// camel is a data-* name as jQuery keys it: foo-bar → fooBar.
func camel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// matcher reads a filter/is/not argument: a selector, a function(index,
// element) or a Selection.
func (s *Selection) matcher(arg sobek.Value) (sel string, fn func(int, *goquery.Selection) bool, other *goquery.Selection) {
	if f, ok := sobek.AssertFunction(arg); ok {
		return "", func(i int, g *goquery.Selection) bool {
			v, err := f(sobek.Undefined(), s.m.rt.ToValue(i), s.m.rt.ToValue(s.m.element(g.Get(0))))
			if err != nil {
				panic(err)
			}
			return v.ToBoolean()
		}, nil
	}
	if o, ok := arg.Export().(*Selection); ok {
		return "", nil, o.sel
	}
	return arg.String(), nil, nil
}

func (s *Selection) Filter(arg sobek.Value) *Selection {
	sel, fn, other := s.matcher(arg)
	switch {
	case fn != nil:
		return s.wrap(s.sel.FilterFunction(fn))
	case other != nil:
		return s.wrap(s.sel.FilterSelection(other))
	}
	return s.wrap(s.sel.Filter(sel))
}

func (s *Selection) Not(arg sobek.Value) *Selection {
	sel, fn, other := s.matcher(arg)
	switch {
	case fn != nil:
		return s.wrap(s.sel.NotFunction(fn))
	case other != nil:
		return s.wrap(s.sel.NotSelection(other))
	}
	return s.wrap(s.sel.Not(sel))
}

func (s *Selection) Is(arg sobek.Value) bool {
	sel, fn, other := s.matcher(arg)
	switch {
	case fn != nil:
		return s.sel.IsFunction(fn)
	case other != nil:
		return s.sel.IsSelection(other)
	}
	return s.sel.Is(sel)
}

// Each is each(fn(index, element)).
func (s *Selection) Each(fn sobek.Callable) *Selection {
	s.sel.Each(func(i int, g *goquery.Selection) {
		if _, err := fn(sobek.Undefined(), s.m.rt.ToValue(i), s.m.rt.ToValue(s.m.element(g.Get(0)))); err != nil {
			panic(err)
		}
	})
	return s
}

// Map is map(fn(index, element)): the values fn returns, as an array
// (null and undefined left out, arrays flattened, as jQuery does).
func (s *Selection) Map(fn sobek.Callable) []any {
	out := []any{}
	s.sel.Each(func(i int, g *goquery.Selection) {
		v, err := fn(sobek.Undefined(), s.m.rt.ToValue(i), s.m.rt.ToValue(s.m.element(g.Get(0))))
		if err != nil {
			panic(err)
		}
		if !given(v) {
			return
		}
		if o, ok := v.(*sobek.Object); ok && o.ClassName() == "Array" {
			for _, k := range o.Keys() {
				out = append(out, o.Get(k))
			}
			return
		}
		out = append(out, v)
	})
	return out
}

// Get is get(index): the element at index (negative from the end), or
// undefined.
func (s *Selection) Get(i int) sobek.Value {
	if i < 0 {
		i += s.sel.Size()
	}
	if i < 0 || i >= s.sel.Size() {
		return sobek.Undefined()
	}
	return s.m.rt.ToValue(s.m.element(s.sel.Get(i)))
}

// ToArray is toArray(): one Selection per element.
func (s *Selection) ToArray() []*Selection {
	out := make([]*Selection, 0, s.sel.Size())
	s.sel.Each(func(_ int, g *goquery.Selection) { out = append(out, s.wrap(g)) })
	return out
}

// Slice is slice(start[, end]).
func (s *Selection) Slice(start int, end sobek.Value) *Selection {
	e := s.sel.Size()
	if given(end) {
		e = int(end.ToInteger())
	}
	n := s.sel.Size()
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return max(0, min(i, n))
	}
	start, e = clamp(start), clamp(e)
	if start >= e {
		return s.wrap(s.sel.Slice(0, 0))
	}
	return s.wrap(s.sel.Slice(start, e))
}

// filtered applies an optional selector to a traversal's result.
func (s *Selection) filtered(g *goquery.Selection, sel sobek.Value) *Selection {
	if given(sel) {
		g = g.Filter(sel.String())
	}
	return s.wrap(g)
}

func (s *Selection) Next(sel sobek.Value) *Selection    { return s.filtered(s.sel.Next(), sel) }
func (s *Selection) NextAll(sel sobek.Value) *Selection { return s.filtered(s.sel.NextAll(), sel) }
func (s *Selection) Prev(sel sobek.Value) *Selection    { return s.filtered(s.sel.Prev(), sel) }
func (s *Selection) PrevAll(sel sobek.Value) *Selection { return s.filtered(s.sel.PrevAll(), sel) }
func (s *Selection) Parent(sel sobek.Value) *Selection  { return s.filtered(s.sel.Parent(), sel) }
func (s *Selection) Parents(sel sobek.Value) *Selection { return s.filtered(s.sel.Parents(), sel) }

// until reads an ...Until(selector, filter) call: goquery's stop
// selector (empty: to the end) and the result's optional filter.
func (s *Selection) until(stop sobek.Value, g func(string) *goquery.Selection, all func() *goquery.Selection, filter sobek.Value) *Selection {
	if !given(stop) {
		return s.filtered(all(), filter)
	}
	return s.filtered(g(stop.String()), filter)
}

func (s *Selection) NextUntil(stop, filter sobek.Value) *Selection {
	return s.until(stop, s.sel.NextUntil, s.sel.NextAll, filter)
}

func (s *Selection) PrevUntil(stop, filter sobek.Value) *Selection {
	return s.until(stop, s.sel.PrevUntil, s.sel.PrevAll, filter)
}

func (s *Selection) ParentsUntil(stop, filter sobek.Value) *Selection {
	return s.until(stop, s.sel.ParentsUntil, s.sel.Parents, filter)
}

// Val is val(): an input's value (checkbox and radio "on" by default), a
// textarea's text, a select's selected option's value (an array for a
// multiple select).
func (s *Selection) Val() sobek.Value {
	if s.sel.Size() == 0 {
		return sobek.Undefined()
	}
	first := s.sel.First()
	switch goquery.NodeName(first) {
	case "input":
		v, ok := first.Attr("value")
		t, _ := first.Attr("type")
		if !ok && (t == "checkbox" || t == "radio") {
			v = "on"
		}
		return s.m.rt.ToValue(v)
	case "textarea":
		return s.m.rt.ToValue(first.Text())
	case "option":
		return s.m.rt.ToValue(optionValue(first))
	case "select":
		selected := first.Find("option[selected]")
		if _, multi := first.Attr("multiple"); multi {
			vals := []string{}
			selected.Each(func(_ int, o *goquery.Selection) { vals = append(vals, optionValue(o)) })
			return s.m.rt.ToValue(vals)
		}
		if selected.Size() == 0 {
			selected = first.Find("option").First()
		}
		if selected.Size() == 0 {
			return sobek.Undefined()
		}
		return s.m.rt.ToValue(optionValue(selected.First()))
	}
	return sobek.Undefined()
}

func optionValue(o *goquery.Selection) string {
	if v, ok := o.Attr("value"); ok {
		return v
	}
	return o.Text()
}

// formFields are a form's successful controls, as a browser submits
// them: name and value, in document order.
func formFields(form *goquery.Selection) [][2]string {
	var out [][2]string
	form.Find("input, select, textarea").Each(func(_ int, c *goquery.Selection) {
		name, ok := c.Attr("name")
		if !ok || name == "" {
			return
		}
		if _, disabled := c.Attr("disabled"); disabled {
			return
		}
		switch goquery.NodeName(c) {
		case "input":
			t, _ := c.Attr("type")
			switch strings.ToLower(t) {
			case "submit", "button", "reset", "image", "file":
				return
			case "checkbox", "radio":
				if _, checked := c.Attr("checked"); !checked {
					return
				}
				v, ok := c.Attr("value")
				if !ok {
					v = "on"
				}
				out = append(out, [2]string{name, v})
				return
			}
			v, _ := c.Attr("value")
			out = append(out, [2]string{name, v})
		case "textarea":
			out = append(out, [2]string{name, c.Text()})
		case "select":
			selected := c.Find("option[selected]")
			if selected.Size() == 0 {
				if _, multi := c.Attr("multiple"); multi {
					return
				}
				selected = c.Find("option").First()
			}
			selected.Each(func(_ int, o *goquery.Selection) { out = append(out, [2]string{name, optionValue(o)}) })
		}
	})
	return out
}

// FormFields are the form's fields as a browser would submit them.
func FormFields(form *goquery.Selection) [][2]string { return formFields(form) }

// Serialize is serialize(): the form's fields URL-encoded.
func (s *Selection) Serialize() string {
	var parts []string
	for _, f := range formFields(s.sel) {
		parts = append(parts, url.QueryEscape(f[0])+"="+url.QueryEscape(f[1]))
	}
	return strings.Join(parts, "&")
}

// SerializeArray is serializeArray(): [{name, value}].
func (s *Selection) SerializeArray() []map[string]string {
	out := []map[string]string{}
	for _, f := range formFields(s.sel) {
		out = append(out, map[string]string{"name": f[0], "value": f[1]})
	}
	return out
}

// SerializeObject is serializeObject(): {name: value} in the form's
// order, a name given more than once an array.
func (s *Selection) SerializeObject() *sobek.Object {
	vals := map[string]any{}
	var order []string
	for _, f := range formFields(s.sel) {
		switch prev := vals[f[0]].(type) {
		case nil:
			vals[f[0]] = f[1]
			order = append(order, f[0])
		case string:
			vals[f[0]] = []string{prev, f[1]}
		case []string:
			vals[f[0]] = append(prev, f[1])
		}
	}
	out := s.m.rt.NewObject()
	for _, k := range order {
		_ = out.Set(k, vals[k])
	}
	return out
}

// node is n as a one-element goquery selection.
func node(n *html.Node) *goquery.Selection { return goquery.NewDocumentFromNode(n).Selection }
