// k6 docs, using-k6/thresholds (checks): a threshold on the checks rate
// fails the test (exit 99) when too few checks pass.
// expect: exit 99
// expect: threshold checks "rate>0.9" crossed
// expect: metric checks value 0.5
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 4, thresholds: { checks: ['rate>0.9'] } };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'status is 404': (r) => r.status === 404,
  });
}
