// k6 docs, javascript-api/k6/check (tags): check(val, sets, tags) adds tags
// to the check's metric, which a threshold can select.
// expect: exit 0
// expect: metric checks{area:cart} passes 2
// expect: threshold checks{area:cart} "rate==1" ok
import http from 'k6/http';
import { check } from 'k6';

export const options = { iterations: 2, thresholds: { 'checks{area:cart}': ['rate==1'] } };

export default function () {
  const res = http.get(`${__ENV.BASE_URL}/ok`);
  check(res, { 'cart ok': (r) => r.status === 200 }, { area: 'cart' });
}
