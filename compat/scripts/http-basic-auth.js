// k6 docs, examples/http-authentication (basic): credentials in the URL are
// sent as an Authorization: Basic header.
// expect: exit 0
// expect: check "basic auth header" 1 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const url = `${__ENV.BASE_URL}/echo`.replace('http://', 'http://user:pass@');
  const res = http.get(url);
  check(res.json(), { 'basic auth header': (e) => e.headers.Authorization === 'Basic dXNlcjpwYXNz' });
}
