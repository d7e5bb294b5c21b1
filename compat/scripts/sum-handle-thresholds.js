// k6 docs, custom-summary (data structure): each metric's thresholds are in
// data.metrics[name].thresholds with an `ok` flag; handleSummary does not
// change the exit code of crossed thresholds (99).
// summary: handleSummary summary.json
// expect: exit 99
// expect: threshold http_req_failed "rate<0.01" crossed
// expect: threshold http_req_duration "p(95)<5000" ok
import http from 'k6/http';

export const options = {
  iterations: 2,
  thresholds: { http_req_failed: ['rate<0.01'], http_req_duration: ['p(95)<5000'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/503`);
}

export function handleSummary(data) {
  return { 'summary.json': JSON.stringify(data) };
}
