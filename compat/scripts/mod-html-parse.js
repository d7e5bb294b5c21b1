// k6 docs, javascript-api/k6-html/parsehtml: parseHTML(body) gives a
// jQuery-like Selection: find(), text(), size(), attr().
// expect: exit 0
// expect: check "title" 1 0
// expect: check "three products" 1 0
// expect: check "first link" 1 0
import http from 'k6/http';
import { parseHTML } from 'k6/html';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const doc = parseHTML(http.get(`${__ENV.BASE_URL}/html`).body);
  check(doc, {
    title: (d) => d.find('head title').text() === 'Compat Shop',
    'three products': (d) => d.find('a.product').size() === 3,
    'first link': (d) => d.find('a.product').first().attr('href') === '/ok?p=1',
  });
}
