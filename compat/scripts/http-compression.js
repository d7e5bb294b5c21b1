// k6 docs, javascript-api/k6-http/params (compression): the body is sent
// gzip-compressed, with Content-Encoding saying so.
// expect: exit 0
// expect: check "gzip body" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const body = JSON.stringify({ words: 'load test '.repeat(50) });
  const res = http.post(`${__ENV.BASE_URL}/echo`, body, { compression: 'gzip' });
  check(res.json(), {
    'gzip body': (e) => e.headers['Content-Encoding'] === 'gzip' && e.body.length > 0 && e.body.length < body.length,
  });
}
