// k6 docs, test lifecycle: setup() runs once; what it returns is passed to
// every default() call and to teardown(data).
// expect: exit 0
// expect: check "default got setup data" 6 0
// expect: check "teardown got setup data" 1 0
// expect: server /setup 1
// expect: server /teardown 1
// expect: server /ok 6
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: { main: { executor: 'per-vu-iterations', vus: 2, iterations: 3 } },
};

export function setup() {
  http.get(`${__ENV.BASE_URL}/setup`);
  return { token: 'tok-from-setup', list: [1, 2, 3] };
}

export default function (data) {
  http.get(`${__ENV.BASE_URL}/ok`);
  check(data, { 'default got setup data': (d) => d.token === 'tok-from-setup' && d.list.length === 3 });
}

export function teardown(data) {
  http.get(`${__ENV.BASE_URL}/teardown`);
  check(data, { 'teardown got setup data': (d) => d.token === 'tok-from-setup' });
}
