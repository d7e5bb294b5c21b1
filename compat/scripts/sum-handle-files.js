// k6 docs, results-output/end-of-test/custom-summary: handleSummary's other
// keys are files to write; summary.json with JSON.stringify(data) is k6's
// own example. Nothing goes to stdout then.
// summary: handleSummary summary.json
// expect: exit 0
// expect: metric iterations count 4
// expect: metric http_reqs count 4
// expect: check "status is 200" 4 0
// expect: file report.txt contains "iterations=4"
// expect: stdout lacks "http_reqs"
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 4 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return {
    'summary.json': JSON.stringify(data),
    'report.txt': `iterations=${data.metrics.iterations.values.count}\n`,
  };
}
