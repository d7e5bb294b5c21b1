// k6 docs, options reference (discardResponseBodies): response bodies are
// discarded, res.body is null.
// expect: exit 0
// expect: check "body discarded" 2 0
// expect: check "status is 200" 2 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2, discardResponseBodies: true };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/json`);
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body discarded': (r) => r.body === null,
  });
}
