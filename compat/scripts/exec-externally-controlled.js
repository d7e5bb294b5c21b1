// k6 docs, executors/externally-controlled: controlled at run time through
// k6's REST API, which throttle does not have: refused before any traffic,
// with one line naming it (throttle's rule for what it does not support).
// expect: exit 2
// expect: stderr contains "externally-controlled"
// expect: stderr lines 1
// expect: server /ok 0
import http from 'k6/http';

export const options = {
  scenarios: {
    contacts: { executor: 'externally-controlled', vus: 2, maxVUs: 4, duration: '2s' },
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
