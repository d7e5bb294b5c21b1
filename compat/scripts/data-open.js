// k6 docs, javascript-api/init-context/open: open() reads a file in the
// init context, relative to the script; "b" returns an ArrayBuffer.
// expect: exit 0
// expect: check "three users" 1 0
// expect: check "four bytes" 1 0
import { check } from 'k6';

const users = JSON.parse(open('./data/users.json'));
const bin = open('./data/four-bytes.bin', 'b');

export const options = { iterations: 1 };

export default function () {
  check(users, { 'three users': (u) => u.length === 3 && u[1].username === 'bob' });
  check(bin, { 'four bytes': (b) => b.byteLength === 4 && new Uint8Array(b)[3] === 4 });
}
