// k6 docs, executors/shared-iterations: the VUs share `iterations`; the test
// ends once all of them ran, so exactly 20 iterations and 20 requests.
// expect: exit 0
// expect: metric iterations count 20
// expect: metric http_reqs count 20
// expect: metric vus_max value 4
// expect: check "status is 200" 20 0
// expect: server /ok 20
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    contacts: { executor: 'shared-iterations', vus: 4, iterations: 20, maxDuration: '30s' },
  },
};

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
