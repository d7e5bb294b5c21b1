// k6 docs, options reference (maxRedirects): how many redirects are
// followed; 0 returns the redirect response itself.
// expect: exit 0
// expect: check "redirect not followed" 1 0
// expect: server /ok 0
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1, maxRedirects: 0 };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/redirect?to=/ok`);
  check(res, { 'redirect not followed': (r) => r.status === 302 });
}
