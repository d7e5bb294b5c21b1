// k6 docs, using-k6/javascript-typescript-compatibility-mode: k6 runs
// TypeScript (.ts) scripts directly, types stripped.
// expect: exit 0
// expect: check "typed sum" 2 0
// expect: server /ok 2
import http from 'k6/http';
import { check } from 'k6';

interface Totals {
  items: number[];
}

export const options = { iterations: 2 };

function sum(t: Totals): number {
  return t.items.reduce((a: number, b: number) => a + b, 0);
}

export default function (): void {
  http.get(`${__ENV.BASE_URL}/ok`);
  check(sum({ items: [1, 2, 3] }), { 'typed sum': (n: number) => n === 6 });
}
