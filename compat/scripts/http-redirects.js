// k6 docs, options reference (maxRedirects) and k6-http/params (redirects):
// redirects are followed (res.url is the final URL); redirects: 0 returns
// the 302 itself.
// expect: exit 0
// expect: check "followed to /ok" 1 0
// expect: check "not followed" 1 0
// expect: server /redirect 2
// expect: server /ok 1
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  const followed = http.get(`${__ENV.BASE_URL}/redirect?to=/ok`);
  check(followed, { 'followed to /ok': (r) => r.status === 200 && r.url.endsWith('/ok') });
  const kept = http.get(`${__ENV.BASE_URL}/redirect?to=/ok`, { redirects: 0 });
  check(kept, { 'not followed': (r) => r.status === 302 });
}
