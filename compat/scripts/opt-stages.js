// k6 docs, options reference (stages): `stages` is the shortcut for a
// ramping-vus scenario (starting at `vus`, default 1): 1 -> 3 VUs in 1 s,
// 3 -> 0 in 1 s; with 0.25 s iterations some 14 to 17 iterations.
// expect: exit 0
// expect: metric vus_max value 3
// expect: metric iterations count 9..18
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  stages: [
    { duration: '1s', target: 3 },
    { duration: '1s', target: 0 },
  ],
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.25);
}
