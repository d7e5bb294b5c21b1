// k6 docs, javascript-api/k6-http/params: a request whose params are
// invalid (a timeout that is no duration) throws; the next request of the
// VU goes to its own URL, not the one before.
// expect: exit 0
// expect: server /first 1
// expect: server /second 1
// expect: check "second answered" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE_URL}/first`);
  try {
    http.get(`${__ENV.BASE_URL}/bad`, { timeout: 'not-a-duration' });
  } catch (e) {
    // expected: the params are invalid
  }
  const res = http.get(`${__ENV.BASE_URL}/second`);
  check(res, { 'second answered': (r) => r.url.endsWith('/second') });
}
