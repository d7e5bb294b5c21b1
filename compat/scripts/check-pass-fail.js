// k6 docs, using-k6/checks: a check records a pass or a fail and does not
// stop the iteration or the test (exit 0); the checks rate is the share of
// passes.
// expect: exit 0
// expect: check "status is 200" 5 0
// expect: check "body has the missing word" 0 5
// expect: metric checks passes 5
// expect: metric checks fails 5
// expect: metric checks value 0.5
// expect: server /ok 5
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 5 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body has the missing word': (r) => r.body.includes('missing'),
  });
}
