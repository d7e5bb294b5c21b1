// k6 docs, scenarios (startTime): a scenario starts `startTime` after the
// test began. `late` starts 1 s after `early`.
// expect: exit 0
// expect: check "early starts at once" 1 0
// expect: check "late starts after 1s" 1 0
// expect: metric iterations count 2
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    early: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'early' },
    late: { executor: 'per-vu-iterations', vus: 1, iterations: 1, exec: 'late', startTime: '1s' },
  },
};

export function setup() {
  return { t0: Date.now() };
}

export function early(data) {
  http.get(`${__ENV.BASE_URL}/early`);
  check(Date.now() - data.t0, { 'early starts at once': (ms) => ms < 800 });
}

export function late(data) {
  http.get(`${__ENV.BASE_URL}/late`);
  check(Date.now() - data.t0, { 'late starts after 1s': (ms) => ms >= 950 });
}
