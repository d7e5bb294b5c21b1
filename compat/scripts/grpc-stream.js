// k6 docs, javascript-api/k6-net-grpc/stream: a bidirectional stream on the
// VU's event loop: write, end, a data event per answer, then end, where
// the client is closed; k6's stream metrics count streams and messages.
// expect: exit 0
// expect: check "every answer arrived" 2 0
// expect: metric grpc_streams count 2
// expect: metric grpc_streams_msgs_sent count 6
// expect: metric grpc_streams_msgs_received count 6
// expect: server /throttle.echo.Echo/Chat 2
import { Client, Stream } from 'k6/net/grpc';
import { check } from 'k6';

export const options = { iterations: 2 };

const client = new Client();

export default () => {
  client.connect(__ENV.BASE_URL.replace('http://', ''), { plaintext: true, reflect: true });

  const answers = [];
  const stream = new Stream(client, 'throttle.echo.Echo/Chat');
  stream.on('data', (reply) => answers.push(reply.text));
  stream.on('error', (err) => console.log('Stream Error: ' + JSON.stringify(err)));
  stream.on('end', () => {
    check(answers, { 'every answer arrived': (a) => a.join(',') === 'one,twotwo,three' });
    client.close();
  });

  stream.write({ text: 'one' });
  stream.write({ text: 'two', times: 2 });
  stream.write({ text: 'three' });
  stream.end();
};
