// k6 docs, options reference (noVUConnectionReuse): a VU does not keep its
// connections from one iteration to the next; the requests all go out.
// expect: exit 0
// expect: server /ok 6
// expect: metric http_req_failed passes 0
import http from 'k6/http';

export const options = { vus: 2, iterations: 6, noVUConnectionReuse: true };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
