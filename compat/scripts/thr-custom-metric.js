// k6 docs, using-k6/thresholds (custom metrics): thresholds apply to custom
// metrics too: a Trend whose max is 300 crosses max<250, exit 99.
// expect: exit 99
// expect: threshold basket_ms "max<250" crossed
// expect: threshold basket_ms "avg<250" ok
import { Trend } from 'k6/metrics';

const basket = new Trend('basket_ms');

export const options = {
  iterations: 1,
  thresholds: { basket_ms: ['max<250', 'avg<250'] },
};

export default function () {
  basket.add(100);
  basket.add(300);
  basket.add(50);
}
