// k6 docs, options reference (throw): off (the default), a request that
// fails to go out returns a Response whose error says why, and a custom
// metric's value that is not a number is dropped with a warning.
// expect: exit 0
// expect: check "the error is on the Response" 1 0
// expect: nometric bad
// expect: stderr contains "is not a number"
import http from 'k6/http';
import { check } from 'k6';
import { Trend } from 'k6/metrics';

const bad = new Trend('bad');
export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/delay?ms=3000`, { timeout: '200ms' });
  check(res, { 'the error is on the Response': (r) => r.status === 0 && r.error !== '' });
  bad.add(NaN);
}
