// k6 docs, using-k6/tags-and-groups (groups): groups nest; checks and
// requests inside carry the group path (::shop::cart) as their group tag.
// expect: exit 0
// expect: group "shop"
// expect: group "cart"
// expect: check "cart page ok" 3 0
// expect: metric http_reqs{group:::shop::cart} count 3
// expect: threshold http_reqs{group:::shop::cart} "count==3" ok
import http from 'k6/http';
import { check, group } from 'k6';

export const options = {
  iterations: 3,
  thresholds: { 'http_reqs{group:::shop::cart}': ['count==3'] },
};

export default function () {
  group('shop', function () {
    http.get(`${__ENV.BASE_URL}/ok?page=home`);
    group('cart', function () {
      const res = http.get(`${__ENV.BASE_URL}/ok?page=cart`);
      check(res, { 'cart page ok': (r) => r.status === 200 });
    });
  });
}
