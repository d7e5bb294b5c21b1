// scenarios.js: several scenarios, each its own governed phase.
//
//   browse  ramping-vus: closed loop, the stage's VUs the ceiling
//   order   constant-arrival-rate: open loop, 2000/s the ceiling, each
//           iteration a POST retried up to 3 tries (every try an attempt)
//   smoke   shared-iterations: run as authored, not governed
//
//   throttle demo --script examples/scripts/scenarios.js
import http from 'k6/http';
import { check, group, sleep } from 'k6';
import exec from 'k6/execution';
import throttle from 'k6/x/throttle';

const BASE = __ENV.BASE || 'http://127.0.0.1:8080';
const SPAN = __ENV.SPAN || '10s';

throttle.configure('order', { floor: 5, start: 20, window: '1s' });
throttle.configure('browse', { window: '1s' });

export const options = {
  scenarios: {
    smoke: { executor: 'shared-iterations', vus: 1, iterations: 3, exec: 'smoke' },
    browse: {
      executor: 'ramping-vus', startVUs: 1, exec: 'browse', startTime: '1s',
      stages: [{ duration: SPAN, target: 20 }, { duration: SPAN, target: 20 }],
    },
    order: {
      executor: 'constant-arrival-rate', rate: 2000, timeUnit: '1s', duration: SPAN,
      preAllocatedVUs: 20, maxVUs: 200, exec: 'order', startTime: '1s',
    },
  },
};

export function setup() {
  const res = http.get(`${BASE}/`);
  return { up: res.status === 200 };
}

export function smoke(data) {
  check(http.get(`${BASE}/health`), { 'smoke 200': (r) => r.status === 200 });
}

export function browse() {
  group('browse', () => {
    http.get(`${BASE}/items`, { tags: { name: 'items' } });
    sleep(0.01);
  });
}

export function order() {
  const res = throttle.tries(3, () => http.post(`${BASE}/orders`, JSON.stringify({ item: exec.scenario.iterationInTest }), {
    headers: { 'Content-Type': 'application/json' },
  }), { backoff: '10ms' });
  check(res, { 'order accepted': (r) => r.status === 200 });
  if (exec.scenario.iterationInTest % 1000 === 0) {
    const s = throttle.state();
    console.log(`order: offer ${s.offer.toFixed(1)}/s (ceiling ${s.ceiling}), last bad ${s.lastBad}, ${s.signal}`);
  }
}
