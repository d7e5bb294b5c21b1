// k6 docs, environment variables (__VU): "the variable is 0 when executing
// the setup and teardown functions"; VUs count from 1.
// expect: exit 0
// expect: check "__VU is 0 in setup" 1 0
// expect: check "__VU is 0 in teardown" 1 0
// expect: check "__VU counts from 1" 2 0
import { check } from 'k6';

export const options = { vus: 2, iterations: 2 };

export function setup() {
  check(__VU, { '__VU is 0 in setup': (v) => v === 0 });
}

export default function () {
  check(__VU, { '__VU counts from 1': (v) => v >= 1 && v <= 2 });
}

export function teardown() {
  check(__VU, { '__VU is 0 in teardown': (v) => v === 0 });
}
