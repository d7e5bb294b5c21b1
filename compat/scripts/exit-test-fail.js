// k6 docs, javascript-api/k6-execution (test.fail): marks the test failed
// and lets it run on: all 5 iterations complete, then exit code 110.
// expect: exit 110
// expect: metric iterations count 5
// expect: server /ok 5
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  scenarios: { main: { executor: 'per-vu-iterations', vus: 1, iterations: 5 } },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  if (__ITER === 1) {
    exec.test.fail('marked as failed');
  }
}
