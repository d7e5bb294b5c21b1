// k6 docs, using-k6/thresholds: thresholds that hold leave the exit code 0
// and are marked ok.
// expect: exit 0
// expect: threshold http_req_failed "rate<0.01" ok
// expect: threshold http_req_duration "p(95)<2000" ok
import http from 'k6/http';

export const options = {
  iterations: 5,
  thresholds: {
    http_req_failed: ['rate<0.01'],
    http_req_duration: ['p(95)<2000'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
