// k6 docs, using-k6/thresholds (abortOnFail): a crossed threshold with
// abortOnFail stops the test while it runs (k6 evaluates thresholds every
// couple of seconds), exit 99; the 6 s scenario does not run out.
// expect: exit 99
// expect: threshold http_req_failed "rate<0.01" crossed
// expect: server /status/500 1..35
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  scenarios: { contacts: { executor: 'constant-vus', vus: 1, duration: '6s' } },
  thresholds: {
    http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: true }],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/500`);
  sleep(0.1);
}
