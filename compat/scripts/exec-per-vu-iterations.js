// k6 docs, executors/per-vu-iterations: each VU runs exactly `iterations`
// iterations; the total is vus * iterations = 4 * 5, every (VU, iteration)
// pair once.
// expect: exit 0
// expect: metric iterations count 20
// expect: metric vus_max value 4
// expect: check "iteration index below 5" 20 0
// expect: server /vu 20
// expect: distinct /vu 20
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    contacts: { executor: 'per-vu-iterations', vus: 4, iterations: 5, maxDuration: '30s' },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/vu?vu=${__VU}&iter=${__ITER}`);
  check(__ITER, { 'iteration index below 5': (i) => i >= 0 && i < 5 });
}
