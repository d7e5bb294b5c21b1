// k6 docs, javascript-api/k6-http/params (timeout): a request slower than
// its timeout ends with error_code 1050 and status 0, and counts as failed.
// expect: exit 0
// expect: check "timed out" 1 0
// expect: metric http_req_failed passes 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/delay?ms=3000`, { timeout: '300ms' });
  check(res, { 'timed out': (r) => r.status === 0 && r.error_code === 1050 });
}
