// limit.js: a constant-arrival-rate scenario authored far above what the
// target takes (20 000/s); the governor finds the target's real limit.
//
// Against nginx limit_req at 400 r/s (bench/nginx-limit.sh):
//   bench/nginx-limit.sh -- sh -c 'throttle run -e BASE=$TARGET -e PATHNAME=/limited examples/scripts/limit.js'
import http from 'k6/http';
import throttle from 'k6/x/throttle';

throttle.configure('limit', { floor: 10, start: 25, window: '2s' });

export const options = {
  scenarios: {
    limit: {
      executor: 'constant-arrival-rate',
      rate: 20000,
      timeUnit: '1s',
      duration: __ENV.DURATION || '60s',
      preAllocatedVUs: 20,
      maxVUs: 400,
    },
  },
};

const URL = (__ENV.BASE || 'http://127.0.0.1:8080') + (__ENV.PATHNAME || '/');

export default function () {
  http.get(URL);
}
