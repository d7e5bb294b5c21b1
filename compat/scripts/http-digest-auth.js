// k6 docs, examples/http-authentication (digest): credentials in the URL
// with auth: 'digest' answer the server's Digest challenge.
// expect: exit 0
// expect: check "digest authenticated" 1 0
// expect: server /digest-auth/auth/user/passwd 2
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const url = `${__ENV.BASE_URL}/digest-auth/auth/user/passwd`.replace('http://', 'http://user:passwd@');
  const res = http.get(url, { auth: 'digest' });
  check(res, { 'digest authenticated': (r) => r.status === 200 && r.json().authenticated === true });
}
