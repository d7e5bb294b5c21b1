// k6 docs, options reference (--no-summary): no end-of-test summary on
// stdout; the test itself runs as usual.
// args: --no-summary
// expect: exit 0
// expect: stdout lacks "http_reqs"
// expect: server /ok 2
import http from 'k6/http';

export const options = { iterations: 2 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
}
