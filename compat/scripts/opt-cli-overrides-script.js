// k6 docs, how-to/options (order of precedence): command-line flags
// override the script's options: --iterations 5 beats iterations: 3.
// args: --iterations 5
// expect: exit 0
// expect: metric iterations count 5
// expect: server /ok 5
import http from 'k6/http';

export const options = { vus: 1, iterations: 3 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
