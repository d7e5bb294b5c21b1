// k6 docs, test lifecycle: setup may be async; VUs get what its promise
// resolves to.
// expect: exit 0
// expect: check "async setup data" 2 0
import { check } from 'k6';

export const options = { iterations: 2 };

export async function setup() {
  const v = await Promise.resolve(7);
  return { v };
}

export default function (data) {
  check(data, { 'async setup data': (d) => d.v === 7 });
}
