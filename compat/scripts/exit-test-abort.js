// k6 docs, javascript-api/k6-execution (test.abort): aborts the test run
// with exit code 108; teardown still runs.
// expect: exit 108
// expect: server /ok 3
// expect: server /teardown 1
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  scenarios: { main: { executor: 'per-vu-iterations', vus: 1, iterations: 10 } },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  if (__ITER === 2) {
    exec.test.abort('enough');
  }
}

export function teardown() {
  http.get(`${__ENV.BASE_URL}/teardown`);
}
