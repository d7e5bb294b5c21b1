// k6 docs, executors/constant-vus: a fixed number of VUs run as many
// iterations as they can for `duration`. 3 VUs, 2 s, 0.5 s of sleep per
// iteration: 4 iterations per VU (the last one finishes in gracefulStop), 12.
// expect: exit 0
// expect: metric iterations count 10..12
// expect: metric vus_max value 3
// expect: metric vus max 3
// expect: server /ok 10..12
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: {
    contacts: { executor: 'constant-vus', vus: 3, duration: '2s' },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  sleep(0.5);
}
