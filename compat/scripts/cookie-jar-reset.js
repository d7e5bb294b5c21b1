// k6 docs, options reference (noCookiesReset): by default the VU's cookie
// jar is reset after every iteration: the second iteration, which does not
// log in, has no session.
// expect: exit 0
// expect: check "first iteration logged in" 1 0
// expect: check "second iteration starts empty" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: { main: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } },
};

export default function () {
  if (__ITER === 0) {
    http.get(`${__ENV.BASE_URL}/login`);
    const res = http.get(`${__ENV.BASE_URL}/cookies/check`);
    check(res, { 'first iteration logged in': (r) => r.status === 200 });
  } else {
    const res = http.get(`${__ENV.BASE_URL}/cookies/check`);
    check(res, { 'second iteration starts empty': (r) => r.status === 401 });
  }
}
