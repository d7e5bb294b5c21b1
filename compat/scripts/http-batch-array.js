// k6 docs, javascript-api/k6-http/batch: an array of requests is sent in
// parallel and returns the responses in order.
// expect: exit 0
// expect: metric http_reqs count 6
// expect: check "three responses in order" 2 0
// expect: server /ok 2
// expect: server /json 2
// expect: server /echo 2
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const responses = http.batch([
    ['GET', `${__ENV.BASE_URL}/ok`],
    ['GET', `${__ENV.BASE_URL}/json`],
    ['POST', `${__ENV.BASE_URL}/echo`, 'payload'],
  ]);
  check(responses, {
    'three responses in order': (r) =>
      r.length === 3 && r[0].body === 'ok' && r[1].json().name === 'throttle' && r[2].json().body === 'payload',
  });
}
