// k6 docs, javascript-api/k6/fail: an exception ends only its iteration; it
// is logged on stderr, the test goes on and exits 0.
// expect: exit 0
// expect: server /ok 4
// expect: stderr contains "boom in iteration"
import http from 'k6/http';
import { fail } from 'k6';

export const options = { iterations: 4 };

export default function () {
  http.get(`${__ENV.BASE_URL}/ok`);
  fail('boom in iteration');
}
