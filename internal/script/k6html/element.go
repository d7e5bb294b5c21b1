package k6html

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/grafana/sobek"
	"golang.org/x/net/html"
)

// Element is k6's Element: one node of a parsed document, its DOM
// properties read by method calls (el.nodeName(), el.textContent()).
type Element struct {
	m *Module
	n *html.Node
}

// element is n as a script's Element; nil stays nil.
func (m *Module) element(n *html.Node) *Element {
	if n == nil {
		return nil
	}
	return &Element{m: m, n: n}
}

// val is an Element, or null for none.
func (e *Element) val(n *html.Node) sobek.Value {
	if n == nil {
		return sobek.Null()
	}
	return e.m.rt.ToValue(e.m.element(n))
}

func (e *Element) sel() *goquery.Selection { return node(e.n) }

func (e *Element) list(ns []*html.Node) []*Element {
	out := make([]*Element, 0, len(ns))
	for _, n := range ns {
		out = append(out, e.m.element(n))
	}
	return out
}

func (e *Element) Attributes() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, a := range e.n.Attr {
		out[a.Key] = map[string]string{"name": a.Key, "value": a.Val, "namespaceURI": a.Namespace}
	}
	return out
}

func (e *Element) elementChildren() []*html.Node {
	var out []*html.Node
	for c := e.n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

func (e *Element) ChildElementCount() int { return len(e.elementChildren()) }
func (e *Element) Children() []*Element   { return e.list(e.elementChildren()) }

func (e *Element) ChildNodes() []*Element {
	var ns []*html.Node
	for c := e.n.FirstChild; c != nil; c = c.NextSibling {
		ns = append(ns, c)
	}
	return e.list(ns)
}

func (e *Element) ClassList() []string  { return strings.Fields(e.ClassName()) }
func (e *Element) ClassName() string    { return e.attr("class") }
func (e *Element) Id() string           { return e.attr("id") }
func (e *Element) Lang() string         { return e.attr("lang") }
func (e *Element) NamespaceURI() string { return "http://www.w3.org/1999/xhtml" }
func (e *Element) TextContent() string  { return e.sel().Text() }
func (e *Element) HasAttributes() bool  { return len(e.n.Attr) > 0 }
func (e *Element) HasChildNodes() bool  { return e.n.FirstChild != nil }
func (e *Element) ToString() string     { return "[object " + e.NodeName() + "]" }

func (e *Element) attr(name string) string {
	for _, a := range e.n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func (e *Element) GetAttribute(name string) sobek.Value {
	for _, a := range e.n.Attr {
		if a.Key == name {
			return e.m.rt.ToValue(a.Val)
		}
	}
	return sobek.Undefined()
}

func (e *Element) GetAttributeNode(name string) sobek.Value {
	for _, a := range e.n.Attr {
		if a.Key == name {
			return e.m.rt.ToValue(map[string]string{"name": a.Key, "value": a.Val, "namespaceURI": a.Namespace})
		}
	}
	return sobek.Undefined()
}

func (e *Element) HasAttribute(name string) bool {
	_, ok := e.sel().Attr(name)
	return ok
}

func (e *Element) GetElementsByClassName(name string) []*Element {
	return e.list(e.sel().Find("." + name).Nodes)
}

func (e *Element) GetElementsByTagName(name string) []*Element {
	return e.list(e.sel().Find(name).Nodes)
}

func (e *Element) QuerySelector(sel string) sobek.Value {
	return e.val(e.sel().Find(sel).Get(0))
}

func (e *Element) QuerySelectorAll(sel string) []*Element { return e.list(e.sel().Find(sel).Nodes) }

func (e *Element) Matches(sel string) bool { return e.sel().Is(sel) }

func (e *Element) Contains(other *Element) bool {
	if other == nil {
		return false
	}
	for n := other.n; n != nil; n = n.Parent {
		if n == e.n {
			return true
		}
	}
	return false
}

func (e *Element) InnerHTML() string {
	h, _ := e.sel().Html()
	return h
}

func (e *Element) FirstChild() sobek.Value { return e.val(e.n.FirstChild) }
func (e *Element) LastChild() sobek.Value  { return e.val(e.n.LastChild) }

func (e *Element) FirstElementChild() sobek.Value {
	if c := e.elementChildren(); len(c) > 0 {
		return e.val(c[0])
	}
	return sobek.Null()
}

func (e *Element) LastElementChild() sobek.Value {
	if c := e.elementChildren(); len(c) > 0 {
		return e.val(c[len(c)-1])
	}
	return sobek.Null()
}

func (e *Element) NextSibling() sobek.Value     { return e.val(e.n.NextSibling) }
func (e *Element) PreviousSibling() sobek.Value { return e.val(e.n.PrevSibling) }

func (e *Element) NextElementSibling() sobek.Value {
	n := e.n.NextSibling
	for n != nil && n.Type != html.ElementNode {
		n = n.NextSibling
	}
	return e.val(n)
}

func (e *Element) PreviousElementSibling() sobek.Value {
	n := e.n.PrevSibling
	for n != nil && n.Type != html.ElementNode {
		n = n.PrevSibling
	}
	return e.val(n)
}

func (e *Element) ParentNode() sobek.Value { return e.val(e.n.Parent) }

func (e *Element) ParentElement() sobek.Value {
	if p := e.n.Parent; p != nil && p.Type == html.ElementNode {
		return e.val(p)
	}
	return sobek.Null()
}

func (e *Element) OwnerDocument() sobek.Value {
	n := e.n
	for n.Parent != nil {
		n = n.Parent
	}
	if n == e.n {
		return sobek.Null()
	}
	return e.val(n)
}

// NodeName is the DOM's nodeName: the tag in upper case, #text, ...
func (e *Element) NodeName() string {
	switch e.n.Type {
	case html.ElementNode:
		return strings.ToUpper(e.n.Data)
	case html.TextNode:
		return "#text"
	case html.CommentNode:
		return "#comment"
	case html.DocumentNode:
		return "#document"
	}
	return e.n.Data
}

// NodeType is the DOM's nodeType number.
func (e *Element) NodeType() int {
	switch e.n.Type {
	case html.ElementNode:
		return 1
	case html.TextNode:
		return 3
	case html.CommentNode:
		return 8
	case html.DocumentNode:
		return 9
	case html.DoctypeNode:
		return 10
	}
	return 0
}

func (e *Element) NodeValue() sobek.Value {
	if e.n.Type == html.TextNode || e.n.Type == html.CommentNode {
		return e.m.rt.ToValue(e.n.Data)
	}
	return sobek.Null()
}

func (e *Element) IsSameNode(o *Element) bool { return o != nil && o.n == e.n }

func (e *Element) IsEqualNode(o *Element) bool {
	if o == nil {
		return false
	}
	a, errA := goquery.OuterHtml(e.sel())
	b, errB := goquery.OuterHtml(o.sel())
	return errA == nil && errB == nil && a == b
}

func (e *Element) IsDefaultNamespace(ns string) bool { return ns == e.NamespaceURI() }
