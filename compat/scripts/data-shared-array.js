// k6 docs, javascript-api/k6-data/sharedarray: the function runs once, every
// VU reads the same read-only array.
// expect: exit 0
// expect: check "shared users" 4 0
import { SharedArray } from 'k6/data';
import { check } from 'k6';

const users = new SharedArray('users', function () {
  return JSON.parse(open('./data/users.json'));
});

export const options = { vus: 2, iterations: 4 };

export default function () {
  const user = users[__ITER % users.length];
  check(users, { 'shared users': (u) => u.length === 3 && typeof user.username === 'string' });
}
