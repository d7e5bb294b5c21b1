// k6 docs, executors/per-vu-iterations (maxDuration): the scenario is
// stopped after maxDuration even if iterations remain. 0.4 s iterations,
// maxDuration 1 s, gracefulStop 0s: 2 of the 100 complete.
// expect: exit 0
// expect: metric iterations count 2
// expect: server /ok 2
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: {
      executor: 'per-vu-iterations', vus: 1, iterations: 100, maxDuration: '1s', gracefulStop: '0s',
    },
  },
};

export default function () {
  sleep(0.4);
  http.get(`${__ENV.BASE_URL}/ok`);
}
