// k6 docs, options reference (--no-setup, --no-teardown): setup() and
// teardown() are not run; the iterations still are.
// args: --no-setup --no-teardown
// expect: exit 0
// expect: server /setup 0
// expect: server /teardown 0
// expect: server /ok 2
import http from 'k6/http';

export const options = { iterations: 2 };

export function setup() {
  http.get(`${__ENV.BASE_URL}/setup`);
}

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}

export function teardown() {
  http.get(`${__ENV.BASE_URL}/teardown`);
}
