// k6 docs, custom-summary: jslib's textSummary renders k6's default summary
// text for handleSummary to put on stdout.
// expect: exit 0
// expect: stdout contains "✓ status is 200"
// expect: stdout contains "http_reqs"
// expect: stdout lacks "throttle report"
import http from 'k6/http';
import { check } from 'k6';
import { textSummary } from 'https://jslib.k6.io/k6-summary/0.0.2/index.js';

export const options = { iterations: 2 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return { stdout: textSummary(data, { indent: ' ', enableColors: false }) };
}
