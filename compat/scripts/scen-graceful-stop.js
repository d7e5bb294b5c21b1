// k6 docs, scenarios/graceful-stop: an iteration running when the duration
// ends gets up to gracefulStop (here 2 s) to finish. The second 0.7 s
// iteration, started at 0.7 s, completes at 1.4 s and counts.
// expect: exit 0
// expect: metric iterations count 2
// expect: server /ok 2
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: { executor: 'constant-vus', vus: 1, duration: '1s', gracefulStop: '2s' },
  },
};

export default function () {
  sleep(0.7);
  http.get(`${__ENV.BASE_URL}/ok`);
}
