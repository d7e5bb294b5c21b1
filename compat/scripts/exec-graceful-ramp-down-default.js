// k6 docs, executors/ramping-vus (gracefulRampDown, default 30s): a VU
// removed by a falling stage finishes its iteration first. The same test as
// exec-graceful-ramp-down.js with the defaults: 4 or 5 iterations complete.
// expect: exit 0
// expect: metric iterations count 4..5
// expect: server /ok 4..5
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
    },
  },
};

export default function () {
  sleep(0.9);
  http.get(`${__ENV.BASE_URL}/ok`);
}
