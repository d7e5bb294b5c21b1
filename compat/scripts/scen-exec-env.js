// k6 docs, scenarios (exec, env, tags): each scenario runs its own exported
// function with its own __ENV additions; every metric is tagged with its
// scenario's name, so a threshold can filter on it.
// expect: exit 0
// expect: check "browse sees its env" 3 0
// expect: check "buy sees its env" 2 0
// expect: server /browse 3
// expect: server /buy 2
// expect: metric iterations{scenario:browse} count 3
// expect: metric iterations{scenario:buy} count 2
// expect: threshold iterations{scenario:browse} "count==3" ok
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    browse: { executor: 'per-vu-iterations', vus: 1, iterations: 3, exec: 'browse', env: { FLOW: 'browsing' } },
    buy: { executor: 'shared-iterations', vus: 1, iterations: 2, exec: 'buy', env: { FLOW: 'buying' } },
  },
  thresholds: {
    'iterations{scenario:browse}': ['count==3'],
    'iterations{scenario:buy}': ['count==2'],
  },
};

export function browse() {
  http.get(`${__ENV.BASE_URL}/browse`);
  check(__ENV.FLOW, { 'browse sees its env': (v) => v === 'browsing' });
}

export function buy() {
  http.get(`${__ENV.BASE_URL}/buy`);
  check(__ENV.FLOW, { 'buy sees its env': (v) => v === 'buying' });
}
