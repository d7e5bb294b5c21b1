// k6 docs, javascript-api/k6-http/response/response-clicklink: follows the
// first link matching the selector.
// expect: exit 0
// expect: check "link followed" 1 0
// expect: distinct /ok 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const page = http.get(`${__ENV.BASE_URL}/html`);
  const res = page.clickLink({ selector: 'a.product' });
  check(res, { 'link followed': (r) => r.status === 200 && r.url.endsWith('/ok?p=1') });
}
