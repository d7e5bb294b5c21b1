// k6 docs, options reference (setupTimeout): a setup() that runs longer
// than setupTimeout is stopped and the whole test fails: no iteration runs,
// non-zero exit.
// expect: exit 1..255
// expect: server /ok 0
import http from 'k6/http';
import { sleep } from 'k6';

export const options = { iterations: 1, setupTimeout: '300ms' };

export function setup() {
  sleep(2);
}

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
