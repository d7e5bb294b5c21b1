// k6 docs, options reference (throw, --throw): with it, a request that
// fails to go out (here a timeout) throws instead of returning a Response
// with its error; without it, the Response carries the error.
// args: --throw
// expect: exit 0
// expect: check "the timeout threw" 1 0
// expect: check "the ok request did not throw" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  let threw = false;
  try {
    http.get(`${__ENV.BASE_URL}/delay?ms=3000`, { timeout: '200ms' });
  } catch (e) {
    threw = String(e).includes('/delay');
  }
  check(threw, { 'the timeout threw': (t) => t });
  check(http.get(`${__ENV.BASE_URL}/ok`), { 'the ok request did not throw': (r) => r.status === 200 });
}
