// k6 docs, javascript-api/jslib/http-instrumentation-pyroscope: after
// instrumentHTTP every request carries a baggage header naming the
// scenario and the request.
// expect: exit 0
// expect: check "baggage sent" 1 0
import http from 'k6/http';
import { check } from 'k6';
import pyroscope from 'https://jslib.k6.io/http-instrumentation-pyroscope/1.0.2/index.js';

pyroscope.instrumentHTTP();

export const options = { iterations: 1 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/echo`, { tags: { name: 'echo' } });
  check(res.json(), {
    'baggage sent': (e) => e.headers.Baggage.includes('k6.scenario=default') && e.headers.Baggage.includes('k6.name=echo'),
  });
}
