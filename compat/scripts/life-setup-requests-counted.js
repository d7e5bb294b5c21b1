// k6 docs, test lifecycle: setup and teardown make requests like any VU
// code, and their metrics count: 1 + 4 + 1 requests in http_reqs, and the
// check in teardown in checks.
// expect: exit 0
// expect: metric http_reqs count 6
// expect: metric checks passes 5
// expect: metric iterations count 4
import http from 'k6/http';
import { check } from 'k6';

export const options = { vus: 2, iterations: 4 };

export function setup() {
  http.get(`${__ENV.BASE_URL}/setup`);
}

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function teardown() {
  const res = http.get(`${__ENV.BASE_URL}/teardown`);
  check(res, { 'teardown status is 200': (r) => r.status === 200 });
}
