// k6 docs, using-k6/thresholds (thresholds on tags): a threshold on
// http_req_duration{name:slow} reads only the requests tagged name:slow.
// The slow ones (250 ms) cross p(95)<100; the fast ones pass p(95)<200.
// expect: exit 99
// expect: threshold http_req_duration{name:slow} "p(95)<100" crossed
// expect: threshold http_req_duration{name:fast} "p(95)<200" ok
// expect: server /delay 2
import http from 'k6/http';

export const options = {
  iterations: 2,
  thresholds: {
    'http_req_duration{name:slow}': ['p(95)<100'],
    'http_req_duration{name:fast}': ['p(95)<200'],
  },
};

export default function () {
  http.get(`${__ENV.BASE_URL}/delay?ms=250`, { tags: { name: 'slow' } });
  http.get(`${__ENV.BASE_URL}/ok`, { tags: { name: 'fast' } });
}
