// k6 docs, javascript-api/k6-metrics/rate: a Rate is the share of non-zero
// values added: true, false, true, false is 50 %.
// expect: exit 0
// expect: metric my_rate value 0.5
// expect: metric my_rate passes 2
// expect: metric my_rate fails 2
import { Rate } from 'k6/metrics';

const myRate = new Rate('my_rate');

export const options = { iterations: 4 };

export default function () {
  myRate.add(__ITER % 2 === 0);
}
