// k6 docs, javascript-api/k6-http/cookiejar: http.cookieJar() is the VU's
// jar; set() adds a cookie for a URL, cookiesForURL() reads them.
// expect: exit 0
// expect: check "jar cookie sent" 1 0
// expect: check "cookiesForURL" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const jar = http.cookieJar();
  jar.set(`${__ENV.BASE_URL}/`, 'manual', 'yes');
  const res = http.get(`${__ENV.BASE_URL}/cookies`);
  check(res, { 'jar cookie sent': (r) => r.json().cookies.manual === 'yes' });
  const cookies = jar.cookiesForURL(`${__ENV.BASE_URL}/`);
  check(cookies, { cookiesForURL: (c) => c.manual[0] === 'yes' });
}
