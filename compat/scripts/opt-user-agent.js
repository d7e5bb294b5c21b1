// k6 docs, options reference (userAgent): the User-Agent header of every
// request.
// expect: exit 0
// expect: check "user agent sent" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, userAgent: 'compat-agent/1.0' };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/echo`);
  check(res, { 'user agent sent': (r) => r.json().headers['User-Agent'] === 'compat-agent/1.0' });
}
