// k6 docs, executors/shared-iterations: "for a shortcut to this executor,
// use the vus and iterations options": 3 VUs share 9 iterations.
// expect: exit 0
// expect: metric iterations count 9
// expect: metric vus_max value 3
// expect: server /ok 9
import http from 'k6/http';

export const options = { vus: 3, iterations: 9 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
