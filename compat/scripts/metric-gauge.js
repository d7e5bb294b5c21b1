// k6 docs, javascript-api/k6-metrics/gauge: a Gauge keeps the last value
// added, with the smallest and the largest.
// expect: exit 0
// expect: metric my_gauge value 5
// expect: metric my_gauge min 3
// expect: metric my_gauge max 7
import { Gauge } from 'k6/metrics';

const myGauge = new Gauge('my_gauge');

export const options = { iterations: 1 };

export default function () {
  myGauge.add(3);
  myGauge.add(7);
  myGauge.add(5);
}
