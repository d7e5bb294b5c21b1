// k6 docs, options reference (stages, -s/--stage): `-s 1s:2 -s 1s:0` is a
// ramping-vus scenario (starting at 1 VU) up to 2 VUs and down to 0.
// args: -s 1s:2 -s 1s:0
// expect: exit 0
// expect: metric vus_max value 2
// expect: metric iterations count 8..15
import http from 'k6/http';
import { sleep } from 'k6';

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.25);
}
