// k6 docs, executors/constant-arrival-rate and metrics: an arrival that
// finds no free VU (maxVUs reached) is not run but counted in
// dropped_iterations. 10/s for 2 s, one VU that needs 0.45 s per iteration:
// about 5 run, about 15 dropped.
// expect: exit 0
// expect: metric iterations count 3..5
// expect: metric dropped_iterations count 14..17
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: {
      executor: 'constant-arrival-rate',
      rate: 10,
      timeUnit: '1s',
      duration: '2s',
      preAllocatedVUs: 1,
      maxVUs: 1,
    },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.45);
}
