// k6 docs, javascript-api/jslib/utils: k6-utils from jslib, imported by its
// URL (throttle must not fetch it from the internet: issue 23 builds jslib
// in).
// expect: exit 0
// expect: check "randomIntBetween" 1 0
// expect: check "randomString" 1 0
// expect: check "uuidv4" 1 0
import { randomIntBetween, randomString, uuidv4 } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';
import { check } from 'k6';

export const options = { iterations: 1 };

export default function () {
  check(null, {
    randomIntBetween: () => {
      const n = randomIntBetween(3, 5);
      return n >= 3 && n <= 5;
    },
    randomString: () => randomString(8).length === 8,
    uuidv4: () => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuidv4()),
  });
}
