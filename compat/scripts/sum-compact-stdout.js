// k6 docs, results-output/end-of-test (compact, the default summary mode):
// THRESHOLDS, then TOTAL RESULTS with checks_total, checks_succeeded and
// checks_failed, the checks, and the metrics by category; the HTTP timing
// phases are left to full mode.
// expect: exit 0
// expect: stdout contains "█ THRESHOLDS"
// expect: stdout contains "✓ 'rate<0.01' rate=0.00%"
// expect: stdout contains "█ TOTAL RESULTS"
// expect: stdout contains "checks_succeeded...................: 100.00% 3 out of 3"
// expect: stdout contains "✓ status is 200"
// expect: stdout contains "    HTTP"
// expect: stdout contains "    EXECUTION"
// expect: stdout lacks "http_req_waiting"
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 3, thresholds: { http_req_failed: ['rate<0.01'] } };

export default function () {
  check(http.get(`${__ENV.BASE_URL}/ok`), { 'status is 200': (r) => r.status === 200 });
}
