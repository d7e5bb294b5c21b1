// k6 docs, javascript-api/k6-http/response (html): res.html() parses the
// body as HTML, res.html(selector) selects in it.
// expect: exit 0
// expect: check "headline" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/html`);
  check(res, { headline: (r) => r.html('h1.headline').text() === 'Welcome' && r.html().find('li').size() === 3 });
}
