// k6 docs, executors/ramping-vus (gracefulRampDown): with 0s, a VU removed
// by a falling stage is stopped at once, its iteration interrupted. 2 VUs,
// 0.9 s iterations, 2 -> 0 VUs over the second second: 2 or 3 iterations
// complete (the default 30 s would let 5 finish).
// expect: exit 0
// expect: metric iterations count 2..3
// expect: server /ok 2..3
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: {
      executor: 'ramping-vus',
      startVUs: 2,
      stages: [
        { duration: '1s', target: 2 },
        { duration: '1s', target: 0 },
      ],
      gracefulRampDown: '0s',
      gracefulStop: '0s',
    },
  },
};

export default function () {
  sleep(0.9);
  http.get(`${__ENV.BASE_URL}/ok`);
}
