// k6 docs, results-output/end-of-test (--summary-mode=legacy): the layout
// of k6 before v1.0: the checks, then every metric, thresholds marked in
// the margin.
// args: --summary-mode=legacy
// expect: exit 0
// expect: stdout contains "✓ status is 200"
// expect: stdout contains "✓ http_req_failed"
// expect: stdout contains "checks........"
// expect: stdout lacks "TOTAL RESULTS"
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2, thresholds: { http_req_failed: ['rate<0.01'] } };

export default function () {
  check(http.get(`${__ENV.BASE_URL}/ok`), { 'status is 200': (r) => r.status === 200 });
}
