// k6 docs, results-output/end-of-test/custom-summary: what handleSummary
// returns under `stdout` replaces the default summary on stdout.
// expect: exit 0
// expect: stdout contains "CUSTOM SUMMARY iterations=3"
// expect: stdout lacks "http_reqs"
// expect: stdout lacks "throttle report"
import http from 'k6/http';

export const options = { iterations: 3 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}

export function handleSummary(data) {
  return { stdout: `CUSTOM SUMMARY iterations=${data.metrics.iterations.values.count}\n` };
}
