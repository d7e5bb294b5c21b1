// k6 docs, javascript-api/k6-http (post, put, del, request): each method
// sends its verb, body and params.headers.
// expect: exit 0
// expect: check "post sends json" 1 0
// expect: check "put sends body" 1 0
// expect: check "del sends DELETE" 1 0
// expect: check "request sends PATCH" 1 0
// expect: server /echo 4
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const url = `${__ENV.BASE_URL}/echo`;
  const params = { headers: { 'Content-Type': 'application/json', 'X-Compat': 'yes' } };
  const post = http.post(url, JSON.stringify({ name: 'k6' }), params);
  check(post.json(), {
    'post sends json': (e) =>
      e.method === 'POST' && JSON.parse(e.body).name === 'k6' && e.headers['X-Compat'] === 'yes',
  });
  const put = http.put(url, 'replaced', params);
  check(put.json(), { 'put sends body': (e) => e.method === 'PUT' && e.body === 'replaced' });
  const del = http.del(url, null, params);
  check(del.json(), { 'del sends DELETE': (e) => e.method === 'DELETE' });
  const patch = http.request('PATCH', url, 'patched', params);
  check(patch.json(), { 'request sends PATCH': (e) => e.method === 'PATCH' && e.body === 'patched' });
}
