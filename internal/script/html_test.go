package script

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// TestHTMLSelection runs k6/html's parseHTML and Selection and Element
// methods on a document and checks what they read.
func TestHTMLSelection(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "html.js", `
import { parseHTML } from 'k6/html';
export const options = { iterations: 1 };
const src = '<html><head><title>Shop</title></head><body>' +
  '<ul id="items"><li class="a" data-id="1" data-price-eur="2.5">one</li><li class="b">two</li><li class="a">three</li></ul>' +
  '<a href="/x">x</a>' +
  '<form id="f"><input name="q" value="hat"><input type="checkbox" name="c" checked>' +
  '<select name="s"><option value="1">1</option><option value="2" selected>2</option></select><textarea name="t">note</textarea>' +
  '<input type="submit" name="go" value="Go"></form></body></html>';
export default function () {
  const doc = parseHTML(src);
  console.log('title', doc.find('title').text());
  const lis = doc.find('li');
  console.log('size', lis.size(), lis.first().text(), lis.last().text(), lis.eq(1).text());
  console.log('filter', lis.filter('.a').size(), lis.not('.a').text(), lis.is('.b'), lis.filter((i, el) => el.textContent() === 'two').size());
  console.log('data', lis.first().data('id'), lis.first().data().priceEur, lis.first().attr('class'), lis.first().attr('nope', 'dflt'));
  console.log('map', lis.map((i, el) => el.textContent().toUpperCase()).join(','));
  const names = []; lis.each((i, el) => names.push(i + el.nodeName())); console.log('each', names.join(','));
  console.log('nav', lis.first().next().text(), lis.last().prev().text(), lis.first().nextAll().size(), lis.first().parent().attr('id'),
    lis.first().closest('body').size(), lis.slice(1).size(), lis.toArray().length, doc.find('ul').children('.a').size());
  const el = lis.get(0);
  console.log('element', el.nodeName(), el.className(), el.getAttribute('data-id'), el.hasAttribute('class'), el.innerHTML(), el.nextElementSibling().textContent());
  const form = doc.find('#f');
  console.log('form', form.serialize(), JSON.stringify(form.serializeObject()), form.find('select').val(), form.find('textarea').val());
  console.log('html', doc.find('ul').html().startsWith('<li'));
}
`)
	runScript(t, path, "http://127.0.0.1:1", Config{Console: out.add}, 30*time.Second)
	got := out.all()
	for _, want := range []string{
		"title Shop", "size 3 one three two", "filter 2 two true 1", "data 1 2.5 a dflt", "map ONE,TWO,THREE", "each 0LI,1LI,2LI",
		"nav two two 2 items 1 2 3 2", "element LI a 1 true one two",
		`form q=hat&c=on&s=2&t=note {"q":"hat","c":"on","s":"2","t":"note"} 2 note`, "html true",
	} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q\nwant %q", got, want)
		}
	}
}

// TestSubmitFormAndClickLink: res.html(), res.submitForm (the form's
// hidden CSRF field, the submit button and the script's fields, posted
// to the action) and res.clickLink on a loopback server.
func TestSubmitFormAndClickLink(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><a class="next" href="next?p=2">next</a>
<form action="/login" method="post"><input type="hidden" name="csrf" value="t0k"><input name="user" value="">
<button type="submit" name="action" value="signin">Sign in</button></form></body></html>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "csrf=%s user=%s action=%s", r.FormValue("csrf"), r.FormValue("user"), r.FormValue("action"))
	})
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "page "+r.URL.Query().Get("p")) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var out consoleLines
	path := writeScript(t, "form.js", `
import http from 'k6/http';
export const options = { iterations: 1 };
export default function () {
  const res = http.get(__ENV.BASE + '/page');
  console.log('link text', res.html('a.next').text());
  console.log(res.submitForm({ fields: { user: 'ann' }, submitSelector: 'button' }).body);
  console.log(res.clickLink({ selector: 'a.next' }).body);
}
`)
	runScript(t, path, srv.URL, Config{Console: out.add}, 30*time.Second)
	got := out.all()
	for _, want := range []string{"link text next", "csrf=t0k user=ann action=signin", "page 2"} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q, want %q", got, want)
		}
	}
}
