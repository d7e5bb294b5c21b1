// k6 docs, executors/constant-arrival-rate: iterations start at a fixed
// rate whatever the response times: 10 per second for 2 s is 20 iterations,
// none dropped (5 VUs are plenty for 10 ms iterations).
// expect: exit 0
// expect: metric iterations count 19..21
// expect: server /ok 19..21
// expect: nometric dropped_iterations
import http from 'k6/http';

export const options = {
  scenarios: {
    contacts: {
      executor: 'constant-arrival-rate',
      rate: 10,
      timeUnit: '1s',
      duration: '2s',
      preAllocatedVUs: 2,
      maxVUs: 5,
    },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
