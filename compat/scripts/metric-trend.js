// k6 docs, javascript-api/k6-metrics/trend: a Trend keeps statistics of
// what is added: 10, 20, 30, 40 give avg 25, min 10, max 40.
// expect: exit 0
// expect: metric my_trend avg 25
// expect: metric my_trend min 10
// expect: metric my_trend max 40
import { Trend } from 'k6/metrics';

const myTrend = new Trend('my_trend');

export const options = { iterations: 1 };

export default function () {
  [10, 20, 30, 40].forEach((v) => myTrend.add(v));
}
