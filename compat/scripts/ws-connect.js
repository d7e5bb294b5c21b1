// k6 docs, javascript-api/k6-ws/connect and socket: ws.connect blocks until
// the socket closes; its handlers run on the VU meanwhile; the response is
// the handshake's (101); k6's ws metrics count sessions and messages.
// expect: exit 0
// expect: check "status is 101" 2 0
// expect: check "every message echoed" 2 0
// expect: metric ws_sessions count 2
// expect: metric ws_msgs_sent count 6
// expect: metric ws_msgs_received count 6
// expect: metric ws_connecting max 0..30000
// expect: metric ws_session_duration min 0..30000
// expect: server /ws/echo 2
import ws from 'k6/ws';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const url = __ENV.BASE_URL.replace('http://', 'ws://') + '/ws/echo';
  const params = { tags: { my_tag: 'hello' } };
  let received = 0;

  const res = ws.connect(url, params, function (socket) {
    socket.on('open', function open() {
      for (const m of ['a', 'b', 'c']) socket.send(m);
    });
    socket.on('message', function (message) {
      received++;
      if (received === 3) socket.close();
    });
    // A safety net, as k6's examples set one: the session ends anyway.
    socket.setTimeout(function () { socket.close(); }, 10000);
  });

  check(res, { 'status is 101': (r) => r && r.status === 101 });
  check(received, { 'every message echoed': (n) => n === 3 });
}
