// k6 docs, javascript-api/jslib/k6chaijs: describe() and expect() from
// jslib; every expect is recorded as a check.
// expect: exit 0
// expect: metric checks passes 2..100
// expect: metric checks fails 0
import http from 'k6/http';
import { describe, expect } from 'https://jslib.k6.io/k6chaijs/4.3.4.3/index.js';

export const options = { iterations: 1 };

export default function () {
  describe('catalog', () => {
    const res = http.get(`${__ENV.BASE_URL}/json`);
    expect(res.status, 'status').to.equal(200);
    expect(res.json().items, 'items').to.have.lengthOf(3);
  });
}
