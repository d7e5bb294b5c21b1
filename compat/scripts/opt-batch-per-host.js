// k6 docs, options reference (batchPerHost): the most requests one
// http.batch call has in flight to one host. 3 requests of 0.3 s to one
// host with batchPerHost 1 go out one after the other: at least 0.9 s.
// args: --batch-per-host 1
// expect: exit 0
// expect: server /delay 3
// expect: metric iteration_duration min 880..5000
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.batch([1, 2, 3].map((i) => `${__ENV.BASE_URL}/delay?ms=300&i=${i}`));
}
