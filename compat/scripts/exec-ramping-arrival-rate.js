// k6 docs, executors/ramping-arrival-rate: the start rate follows the
// stages: 0 -> 20/s over 1 s (10 iterations), then 20/s for 1 s (20): 30.
// expect: exit 0
// expect: metric iterations count 27..31
// expect: server /ok 27..31
import http from 'k6/http';

export const options = {
  scenarios: {
    contacts: {
      executor: 'ramping-arrival-rate',
      startRate: 0,
      timeUnit: '1s',
      preAllocatedVUs: 2,
      maxVUs: 10,
      stages: [
        { target: 20, duration: '1s' },
        { target: 20, duration: '1s' },
      ],
    },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
