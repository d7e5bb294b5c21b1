// k6 docs, javascript-api/k6-http/batch: an object of named requests
// returns an object of responses under the same names.
// expect: exit 0
// expect: check "named responses" 1 0
// expect: server /json 1
// expect: server /echo 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const responses = http.batch({
    catalog: ['GET', `${__ENV.BASE_URL}/json`],
    echo: { method: 'GET', url: `${__ENV.BASE_URL}/echo`, params: { headers: { 'X-Batch': 'yes' } } },
  });
  check(responses, {
    'named responses': (r) => r.catalog.json().name === 'throttle' && r.echo.json().headers['X-Batch'] === 'yes',
  });
}
