// k6 docs, using-k6/cookies: cookies a server sets are stored in the VU's
// jar and sent on later requests; res.cookies lists the response's.
// expect: exit 0
// expect: check "csrf cookie read" 1 0
// expect: check "session sent back" 1 0
// expect: server /cookies/check 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const login = http.post(`${__ENV.BASE_URL}/login`, { user: 'alice' });
  check(login, { 'csrf cookie read': (r) => r.cookies.csrf[0].value === 'tok-42' });
  const home = http.get(`${__ENV.BASE_URL}/cookies/check`);
  check(home, { 'session sent back': (r) => r.status === 200 });
}
