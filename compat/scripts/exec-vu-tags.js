// k6 docs, javascript-api/k6-execution (vu.tags): tags set on exec.vu.tags
// are added to the VU's later metrics.
// expect: exit 0
// expect: metric http_reqs{journey:checkout} count 2
// expect: threshold http_reqs{journey:checkout} "count==2" ok
import http from 'k6/http';
import exec from 'k6/execution';

export const options = { iterations: 2, thresholds: { 'http_reqs{journey:checkout}': ['count==2'] } };

export default function () {
  exec.vu.tags['journey'] = 'checkout';
  http.get(`${__ENV.BASE_URL}/ok`);
}
