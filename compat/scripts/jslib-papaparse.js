// k6 docs, javascript-api/jslib/papaparse: Papa Parse parses CSV with a
// header row into objects.
// expect: exit 0
// expect: check "two rows" 1 0
import { check } from 'k6';
import papaparse from 'https://jslib.k6.io/papaparse/5.1.1/index.js';

const csv = papaparse.parse('user,password\nann,one\nbob,two', { header: true }).data;

export const options = { iterations: 1 };

export default function () {
  check(csv, { 'two rows': (rows) => rows.length === 2 && rows[1].user === 'bob' });
}
