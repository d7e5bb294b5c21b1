// k6 docs, javascript-api/k6-http/set-response-callback: with
// expectedStatuses(200, 404) a 404 is not a failed request.
// expect: exit 0
// expect: metric http_req_failed passes 0
// expect: metric http_req_failed fails 2
// expect: threshold http_req_failed "rate==0" ok
import http from 'k6/http';

http.setResponseCallback(http.expectedStatuses(200, 404));

export const options = { iterations: 2, thresholds: { http_req_failed: ['rate==0'] } };

export default function () {
  http.get(`${__ENV.BASE_URL}/status/404`);
}
