// k6 docs, javascript-api/k6-timers: the timers as a module, k6/timers:
// setTimeout, setInterval, clearInterval.
// expect: exit 0
// expect: check "interval ran 3 times" 1 0
import { setInterval, clearInterval, setTimeout } from 'k6/timers';
import { check } from 'k6';

export const options = { iterations: 1 };

export default async function () {
  let ticks = 0;
  await new Promise((resolve) => {
    const id = setInterval(() => {
      ticks++;
      if (ticks === 3) {
        clearInterval(id);
        setTimeout(resolve, 10);
      }
    }, 20);
  });
  check(ticks, { 'interval ran 3 times': (t) => t === 3 });
}
