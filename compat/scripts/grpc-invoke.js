// k6 docs, javascript-api/k6-net-grpc/client: connect (here with server
// reflection, so no .proto is needed), invoke, check the status, close; a
// server that sheds answers RESOURCE_EXHAUSTED, which the response's status
// and error carry; grpc_req_duration times every call.
// expect: exit 0
// expect: check "status is OK" 3 0
// expect: check "reply is echoed" 3 0
// expect: check "shed is RESOURCE_EXHAUSTED" 3 0
// expect: metric grpc_req_duration max 0..30000
// expect: server /throttle.echo.Echo/Say 6
import grpc from 'k6/net/grpc';
import { check } from 'k6';

export const options = { iterations: 3 };

const client = new grpc.Client();

export default () => {
  client.connect(__ENV.BASE_URL.replace('http://', ''), { plaintext: true, reflect: true });

  const data = { text: 'hello', times: 2 };
  const response = client.invoke('throttle.echo.Echo/Say', data, { metadata: { 'x-in': 'meta' } });
  check(response, { 'status is OK': (r) => r && r.status === grpc.StatusOK });
  check(response.message, { 'reply is echoed': (m) => m.text === 'hellohello' && m.count === 2 && m.echoedHeader === 'meta' });

  const shed = client.invoke('throttle.echo.Echo/Say', { text: 'shed' });
  check(shed, { 'shed is RESOURCE_EXHAUSTED': (r) => r.status === grpc.StatusResourceExhausted && r.error.message === 'over capacity' });

  client.close();
};
