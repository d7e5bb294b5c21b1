// k6 docs, options reference (duration, -d): `-u 2 -d 1s` on the command
// line is a constant-vus scenario: 2 VUs x 4 iterations of 0.25 s.
// args: -u 2 -d 1s
// expect: exit 0
// expect: metric iterations count 6..8
// expect: metric vus_max value 2
// expect: server /ok 6..8
import http from 'k6/http';
import { sleep } from 'k6';

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.25);
}
