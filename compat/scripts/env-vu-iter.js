// k6 docs, using-k6/execution-context-variables: __VU is the VU's number
// (from 1), __ITER its iteration count (from 0): 3 VUs x 2 iterations give
// 6 distinct pairs.
// expect: exit 0
// expect: distinct /pair 6
// expect: check "__ITER below 2" 6 0
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: { main: { executor: 'per-vu-iterations', vus: 3, iterations: 2 } },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/pair?vu=${__VU}&iter=${__ITER}`);
  check(__ITER, { '__ITER below 2': (i) => i === 0 || i === 1 });
}
