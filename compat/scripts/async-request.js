// k6 docs, javascript-api/k6-http/asyncrequest: http.asyncRequest returns a
// promise of the Response; several can be awaited together.
// expect: exit 0
// expect: check "async responses" 1 0
// expect: server /ok 2
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  const [a, b] = await Promise.all([
    http.asyncRequest('GET', `${__ENV.BASE_URL}/ok?a`),
    http.asyncRequest('GET', `${__ENV.BASE_URL}/ok?b`),
  ]);
  check([a, b], { 'async responses': (r) => r[0].status === 200 && r[1].status === 200 });
}
