// k6 docs, javascript-api/k6-metrics/counter: a Counter sums what is added:
// (1 + 2) per iteration for 4 iterations is 12.
// expect: exit 0
// expect: metric my_counter count 12
import { Counter } from 'k6/metrics';

const myCounter = new Counter('my_counter');

export const options = { iterations: 4 };

export default function () {
  myCounter.add(1);
  myCounter.add(2);
}
