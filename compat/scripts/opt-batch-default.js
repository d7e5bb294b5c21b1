// k6 docs, options reference (batch, batchPerHost: defaults 20 and 6):
// 6 requests of 0.3 s to one host go out at once: well under 0.9 s.
// expect: exit 0
// expect: server /delay 6
// expect: metric iteration_duration max 290..850
import http from 'k6/http';

export const options = { iterations: 1 };

export default function () {
  http.batch(Array.from({ length: 6 }, (_, i) => `${__ENV.BASE_URL}/delay?ms=300&i=${i}`));
}
