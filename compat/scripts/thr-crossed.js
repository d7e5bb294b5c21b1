// k6 docs, using-k6/thresholds: a crossed threshold does not stop the test
// (all 5 iterations run) but makes k6 exit with 99.
// expect: exit 99
// expect: threshold http_req_failed "rate<0.01" crossed
// expect: metric http_req_failed passes 5
// expect: metric iterations count 5
// expect: server /status/500 5
import http from 'k6/http';

export const options = {
  iterations: 5,
  thresholds: { http_req_failed: ['rate<0.01'] },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/status/500`);
}
