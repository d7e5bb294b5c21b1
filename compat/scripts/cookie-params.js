// k6 docs, using-k6/cookies (setting simple cookies): params.cookies adds
// cookies to one request.
// expect: exit 0
// expect: check "request cookie sent" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/cookies`, { cookies: { flavor: 'chocolate' } });
  check(res, { 'request cookie sent': (r) => r.json().cookies.flavor === 'chocolate' });
}
