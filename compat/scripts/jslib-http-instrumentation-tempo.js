// k6 docs, javascript-api/jslib/http-instrumentation-tempo: after
// instrumentHTTP every k6/http request carries a W3C traceparent header.
// expect: exit 0
// expect: check "traceparent sent" 2 0
import http from 'k6/http';
import { check } from 'k6';
import tempo from 'https://jslib.k6.io/http-instrumentation-tempo/1.0.1/index.js';

tempo.instrumentHTTP({ propagator: 'w3c' });

export const options = { iterations: 2 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/echo`);
  check(res.json(), {
    'traceparent sent': (e) => /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/.test(e.headers.Traceparent),
  });
}
