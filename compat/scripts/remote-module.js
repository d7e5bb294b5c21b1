// k6 docs, using-k6/modules (remote modules): a module imported by URL is
// fetched with its relative imports, once, before the test.
// expect: exit 0
// expect: check "remote module works" 2 0
// expect: server /modules/greet.js 1
// expect: server /modules/shout.js 1
import { greet } from '{{BASE_URL}}/modules/greet.js';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  check(greet('k6'), { 'remote module works': (s) => s === 'HELLO K6' });
}
