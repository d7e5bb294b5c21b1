// k6 docs, scenarios/graceful-stop: with gracefulStop 0s an iteration still
// running when the duration ends is interrupted. Iterations of 0.7 s in a
// 1 s scenario: the first completes, the second is cut off before its
// request.
// expect: exit 0
// expect: metric iterations count 1
// expect: server /ok 1
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '0s' },
  },
};

export default function () {
  sleep(0.7);
  http.get(`${__ENV.BASE_URL}/ok`);
}
