package k6html

import (
	"testing"

	"github.com/grafana/sobek"
)

// run evaluates src in a runtime where parseHTML is k6/html's, with the
// field names a VU's runtime uses.
func run(t *testing.T, src string) sobek.Value {
	t.Helper()
	rt := sobek.New()
	rt.SetFieldNameMapper(sobek.UncapFieldNameMapper())
	_ = rt.Set("html", New(rt).Object())
	v, err := rt.RunString(src)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTraversalAndFormValues(t *testing.T) {
	for src, want := range map[string]string{
		`const d = html.parseHTML('<p id=a>1</p><p>2</p><p class=x>3</p><p>4</p>');
		 d.find('#a').nextUntil('.x').text() + '|' + d.find('p').last().prevUntil('#a', '.x').text() + '|' + d.find('.x').parentsUntil('html').size()`: "2|3|1",
		`const d = html.parseHTML('<select multiple name=m><option selected>a</option><option value=b selected>B</option></select><input type=radio name=r value=1>');
		 JSON.stringify(d.find('select').val()) + d.find('form').size() + d.find('input').val()`: `["a","b"]01`,
		`const d = html.parseHTML('<div data-cfg=\'{"a":1}\' data-on="true"></div>');
		 const o = d.find('div').data(); o.cfg.a + ',' + o.on + ',' + d.find('div').data('missing')`: "1,true,undefined",
		`const d = html.parseHTML('<ul><li>a</li><li>b</li></ul>');
		 const li = d.find('li').get(-1); li.previousElementSibling().textContent() + li.parentElement().nodeName() + d.find('ul').get(0).childElementCount()`: "aUL2",
		`const d = html.parseHTML('<p>x<!--c--></p>');
		 const p = d.find('p').get(0); [p.nodeType() === html.NodeType.ElementNode, p.firstChild().nodeType() === html.NodeType.TextNode, p.lastChild().nodeType() === html.NodeType.CommentNode].join()`: "true,true,true",
	} {
		if got := run(t, src).String(); got != want {
			t.Errorf("%s\n= %q, want %q", src, got, want)
		}
	}
}
