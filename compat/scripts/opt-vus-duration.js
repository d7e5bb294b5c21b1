// k6 docs, options reference (vus, duration): `vus` with `duration` is the
// shortcut for one constant-vus scenario. 2 VUs, 1 s, 0.25 s of sleep per
// iteration: 4 iterations per VU, 8.
// expect: exit 0
// expect: metric iterations count 6..8
// expect: metric vus_max value 2
// expect: server /ok 6..8
import http from 'k6/http';
import { sleep } from 'k6';

export const options = { vus: 2, duration: '1s' };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.25);
}
