// k6 docs, scenarios: several scenarios run in one test, in parallel, each
// with its own executor: 4 shared iterations beside 2 x 3 per-VU ones.
// expect: exit 0
// expect: metric iterations count 10
// expect: server /shared 4
// expect: server /pervu 6
import http from 'k6/http';

export const options = {
  scenarios: {
    shared: { executor: 'shared-iterations', vus: 2, iterations: 4, exec: 'shared' },
    pervu: { executor: 'per-vu-iterations', vus: 2, iterations: 3, exec: 'pervu' },
  },
};

export function shared() {
  http.get(`${__ENV.BASE_URL}/shared`);
}

export function pervu() {
  http.get(`${__ENV.BASE_URL}/pervu`);
}
