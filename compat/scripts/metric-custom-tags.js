// k6 docs, javascript-api/k6-metrics/counter (add with tags): a value added
// with tags can be selected by a threshold on those tags.
// expect: exit 0
// expect: metric orders{kind:express} count 3
// expect: threshold orders{kind:express} "count==3" ok
// expect: metric orders count 5
import { Counter } from 'k6/metrics';

const orders = new Counter('orders');

export const options = {
  iterations: 1,
  thresholds: { 'orders{kind:express}': ['count==3'] },
};

export default function () {
  orders.add(3, { kind: 'express' });
  orders.add(2, { kind: 'standard' });
}
