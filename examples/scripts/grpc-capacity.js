// grpc-capacity.js: find a gRPC service's capacity with a k6 script.
//
// The service sheds with RESOURCE_EXHAUSTED above its capacity, which the
// governor counts as a 503. As in capacity.js the authored rate
// (10 000/s) is the ceiling; the governor climbs from 25/s and settles at
// the service's capacity.
//
//   throttle demo --grpc --script examples/scripts/grpc-capacity.js
//   throttle run -e BASE=127.0.0.1:50051 examples/scripts/grpc-capacity.js
//
// The service is throttle.echo.Echo (internal/protoecho/echo.proto); its
// methods come from the server's reflection service. __ENV.DURATION
// shortens the run (the tests use a few seconds).
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import throttle from 'k6/x/throttle';

throttle.configure('capacity', { floor: 10, start: 25, window: '1s' });

export const options = {
  scenarios: {
    capacity: {
      executor: 'constant-arrival-rate',
      rate: 10000,
      timeUnit: '1s',
      duration: __ENV.DURATION || '30s',
      // Each VU opens its own connection (with a reflection round trip):
      // a bounded pool keeps a slow generator from opening hundreds.
      preAllocatedVUs: 10,
      maxVUs: 100,
    },
  },
};

const ADDR = __ENV.BASE || '127.0.0.1:50051';
const client = new grpc.Client();
let connected = false;

export default function () {
  // One connection per VU, opened in its first iteration (connect is not
  // allowed in the init context).
  if (!connected) {
    client.connect(ADDR, { plaintext: true, reflect: true });
    connected = true;
  }
  const res = client.invoke('throttle.echo.Echo/Say', { text: 'hello' });
  check(res, { 'status is OK': (r) => r && r.status === grpc.StatusOK });
}
