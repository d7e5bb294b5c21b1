// k6 docs, results-output/end-of-test: at the end k6 prints the end-of-test
// summary on stdout: the checks and the metrics, and nothing of throttle's
// governor (this script does not import k6/x/throttle).
// expect: exit 0
// expect: stdout contains "✓ status is 200"
// expect: stdout contains "http_reqs"
// expect: stdout contains "iterations"
// expect: stdout lacks "throttle report"
// expect: stdout lacks "verdict"
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 3 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
