// k6 docs, options reference (noCookiesReset): with it the VU's jar is not
// reset between iterations: the second iteration keeps the first's session.
// expect: exit 0
// expect: check "session kept across iterations" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  noCookiesReset: true,
  scenarios: { main: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } },
};

export default function () {
  if (__ITER === 0) {
    http.get(`${__ENV.BASE_URL}/login`);
    return;
  }
  const res = http.get(`${__ENV.BASE_URL}/cookies/check`);
  check(res, { 'session kept across iterations': (r) => r.status === 200 });
}
