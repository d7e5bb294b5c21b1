// capacity.js: find a target's capacity with a k6 script.
//
// The authored rate (10 000/s) is the ceiling, far above what the target
// takes; the governor starts at 25/s, climbs while the target stays clean,
// backs off when more than 5 % of the attempts fail and settles at the
// target's capacity, which the report gives.
//
//   throttle demo --script examples/scripts/capacity.js
//   throttle run -e BASE=http://127.0.0.1:8080 examples/scripts/capacity.js
//
// __ENV.DURATION shortens the run (the tests use a few seconds).
import http from 'k6/http';
import { check } from 'k6';
import throttle from 'k6/x/throttle';

// Governor settings for the scenario "capacity": 1 s windows judged on
// ~800 attempts at the demo target's capacity, a floor of 10/s, a gentle
// start. Flags (--window, --floor, ...) override them.
throttle.configure('capacity', { floor: 10, start: 25, window: '1s' });

export const options = {
  scenarios: {
    capacity: {
      executor: 'constant-arrival-rate',
      rate: 10000,
      timeUnit: '1s',
      duration: __ENV.DURATION || '30s',
      preAllocatedVUs: 50,
      maxVUs: 500,
    },
  },
};

const BASE = __ENV.BASE || 'http://127.0.0.1:8080';

export default function () {
  const res = http.get(`${BASE}/`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}
