// k6 docs, executors/ramping-vus: VUs follow the stages, 0 -> 4 in 1 s, hold
// 4 for 1 s, 4 -> 0 in 0.5 s (gracefulRampDown lets iterations finish). With
// 0.25 s iterations that is about 6.75 VU-seconds: some 27 iterations.
// expect: exit 0
// expect: metric vus_max value 4
// expect: metric vus max 4
// expect: metric iterations count 20..32
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: '1s', target: 4 },
        { duration: '1s', target: 4 },
        { duration: '500ms', target: 0 },
      ],
    },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.25);
}
