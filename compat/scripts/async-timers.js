// k6 docs, javascript-api/k6-timers: setTimeout is a global; an async
// default function's promises settle before the iteration ends.
// expect: exit 0
// expect: server /after-timeout 2
// expect: check "waited 50 ms" 2 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default async function () {
  const start = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 50));
  check(Date.now() - start, { 'waited 50 ms': (ms) => ms >= 45 });
  http.get(`${__ENV.BASE_URL}/after-timeout`);
}
