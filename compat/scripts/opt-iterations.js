// k6 docs, options reference (iterations): `iterations` alone is a
// shared-iterations scenario with the default 1 VU: exactly 7 iterations.
// expect: exit 0
// expect: metric iterations count 7
// expect: metric vus_max value 1
// expect: server /ok 7
import http from 'k6/http';

export const options = { iterations: 7 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
