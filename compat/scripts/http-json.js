// k6 docs, javascript-api/k6-http/response (json): res.json() parses the
// body; res.json(selector) picks a value by its path.
// expect: exit 0
// expect: check "json parsed" 1 0
// expect: check "json selector" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/json`);
  check(res, {
    'json parsed': (r) => r.json().items.length === 3,
    'json selector': (r) => r.json('nested.value') === 42,
  });
}
