// k6 docs, javascript-api/jslib/httpx: a session with a base URL and
// default headers; a call's own headers add to the session's.
// expect: exit 0
// expect: check "session headers" 1 0
// expect: server /echo 1
import { check } from 'k6';
import { Httpx } from 'https://jslib.k6.io/httpx/0.1.0/index.js';

const session = new Httpx({ baseURL: __ENV.BASE_URL, timeout: 20000 });
session.addHeaders({ Authorization: 'token abcdef0123456789' });

export const options = { iterations: 1 };

export default function () {
  const res = session.post('/echo', 'payload', { headers: { 'X-Call': 'one' } });
  check(res.json(), {
    'session headers': (e) =>
      e.headers.Authorization === 'token abcdef0123456789' && e.headers['X-Call'] === 'one' && e.body === 'payload',
  });
}
