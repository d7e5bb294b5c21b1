// k6 docs, options reference (batch): the most requests one http.batch
// call has in flight at once. 6 requests of 0.3 s with batch 2 go out in
// 3 rounds: the iteration takes at least 0.9 s (all 6 at once: 0.3 s).
// expect: exit 0
// expect: server /delay 6
// expect: metric iteration_duration min 880..5000
import http from 'k6/http';

export const options = { iterations: 1, batch: 2 };

export default function () {
  http.batch(Array.from({ length: 6 }, (_, i) => `${__ENV.BASE_URL}/delay?ms=300&i=${i}`));
}
