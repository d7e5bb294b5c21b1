// k6 docs, javascript-api/k6-execution: exec.scenario.name, and
// exec.scenario.iterationInTest, unique across the VUs (0..5 for 6 shared
// iterations); exec.vu.idInTest is the VU's number.
// expect: exit 0
// expect: distinct /iter 6
// expect: check "scenario name" 6 0
// expect: check "vu id" 6 0
import http from 'k6/http';
import exec from 'k6/execution';
import { check } from 'k6';

export const options = {
  scenarios: { shop: { executor: 'shared-iterations', vus: 2, iterations: 6 } },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/iter?i=${exec.scenario.iterationInTest}`);
  check(exec, {
    'scenario name': (e) => e.scenario.name === 'shop',
    'vu id': (e) => e.vu.idInTest >= 1 && e.vu.idInTest <= 2,
  });
}
