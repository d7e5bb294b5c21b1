// k6 docs, options reference (--no-thresholds): thresholds are not
// evaluated, so a crossed one does not make the run exit 99.
// args: --no-thresholds
// expect: exit 0
// expect: server /status/500 3
import http from 'k6/http';

export const options = {
  iterations: 3,
  thresholds: { http_req_failed: ['rate<0.01'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/500`);
}
