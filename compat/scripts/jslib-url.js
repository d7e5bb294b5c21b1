// k6 docs, javascript-api/jslib/url: URL and URLSearchParams from jslib.
// expect: exit 0
// expect: check "query built" 1 0
// expect: server /echo 1
import http from 'k6/http';
import { check } from 'k6';
import { URL } from 'https://jslib.k6.io/url/1.0.0/index.js';

export const options = { iterations: 1 };

export default function () {
  const url = new URL(`${__ENV.BASE_URL}/echo`);
  url.searchParams.append('q', 'k6 rocks');
  const res = http.get(url.toString());
  check(res.json(), { 'query built': (e) => e.query === 'q=k6+rocks' });
}
