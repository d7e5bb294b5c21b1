// k6 docs, javascript-api/k6-websockets/websocket: the browser-style
// WebSocket runs on the VU's event loop; onopen/onmessage/addEventListener,
// text and ArrayBuffer sends, binaryType, close; the iteration ends when the
// socket has closed.
// expect: exit 0
// expect: check "text echoed" 2 0
// expect: check "binary echoed" 2 0
// expect: check "closed cleanly" 2 0
// expect: metric ws_sessions count 2
// expect: metric ws_msgs_sent count 4
// expect: metric ws_msgs_received count 4
// expect: server /ws/echo 2
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';

export const options = { iterations: 2 };

export default function () {
  const ws = new WebSocket(__ENV.BASE_URL.replace('http://', 'ws://') + '/ws/echo');
  ws.binaryType = 'arraybuffer';

  ws.onopen = () => {
    ws.send('lorem ipsum');
    ws.send(new Uint8Array([1, 2, 3]).buffer);
  };
  ws.onmessage = (e) => {
    if (typeof e.data === 'string') {
      check(e.data, { 'text echoed': (d) => d === 'lorem ipsum' });
    } else {
      check(new Uint8Array(e.data), { 'binary echoed': (b) => b.length === 3 && b[2] === 3 });
      ws.close();
    }
  };
  ws.addEventListener('close', (e) => {
    check(e, { 'closed cleanly': (ev) => ev.code === 1000 && ws.readyState === WebSocket.CLOSED });
  });
}
