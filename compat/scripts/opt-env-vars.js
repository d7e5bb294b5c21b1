// k6 docs, options reference: every option has a K6_* environment variable
// (K6_VUS, K6_ITERATIONS), and the environment overrides the script.
// env: K6_VUS=2 K6_ITERATIONS=4
// expect: exit 0
// expect: metric iterations count 4
// expect: metric vus_max value 2
// expect: server /ok 4
import http from 'k6/http';

export const options = { vus: 1, iterations: 1 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
