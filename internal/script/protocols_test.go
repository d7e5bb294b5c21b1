package script

import (
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/protoecho"
)

// startEcho serves a loopback WebSocket echo server (protoecho) at /echo
// and a /shed that answers every handshake 503, and returns its ws:// URL.
func startEcho(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", protoecho.WebSocket)
	mux.HandleFunc("/shed", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "ws://" + ln.Addr().String()
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// metricStats are the run's metrics by name.
func metricStats(r *Runner) map[string]MetricStats {
	out := map[string]MetricStats{}
	for _, m := range r.Metrics() {
		out[m.Name] = m.Stats()
	}
	return out
}

// TestK6WS: k6 documentation's ws.connect shape: the callback's handlers
// and socket timers run until the socket closes; messages, binary
// messages, pings and the close code arrive; each handshake and message
// is an attempt; k6's ws metrics count them.
func TestK6WS(t *testing.T) {
	base := startEcho(t)
	var out consoleLines
	path := writeScript(t, "ws.js", `
import ws from 'k6/ws';
import { check } from 'k6';
export const options = { iterations: 2 };
export default function () {
  let got = 0, bin = 0, pongs = 0, pings = 0;
  const res = ws.connect(__ENV.BASE + '/echo?ping=1', { tags: { my: 'tag' } }, function (socket) {
    socket.on('open', () => {
      socket.send('a');
      socket.send('b');
      socket.sendBinary(new Uint8Array([1, 2, 3]).buffer);
      socket.ping();
    });
    socket.on('message', (m) => { got++; });
    socket.on('binaryMessage', (b) => { bin += new Uint8Array(b).length; });
    socket.on('ping', () => { pings++; });
    socket.on('pong', () => { pongs++; });
    socket.setTimeout(() => socket.send('bye'), 20);
    socket.on('close', (code) => console.log('close', code, got, bin, pongs, pings));
  });
  check(res, { 'status is 101': (r) => r && r.status === 101 });
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	c := r.Phases()[0].Counts()
	// Per iteration: a handshake and four messages sent ('a', 'b', the
	// binary one, 'bye').
	if c.IterOK != 2 || c.OK != 10 || c.Failed != 0 {
		t.Fatalf("counts = %+v, want 2 ok iterations of 5 ok attempts", c)
	}
	if got := out.all(); !slices.Equal(got, []string{"close 4000 2 3 1 1", "close 4000 2 3 1 1"}) {
		t.Fatalf("console = %q", got)
	}
	m := metricStats(r)
	for name, want := range map[string]uint64{"ws_sessions": 2, "ws_msgs_sent": 8, "ws_msgs_received": 6, "ws_connecting": 2, "ws_session_duration": 2, "ws_ping": 2} {
		if m[name].Count != want {
			t.Errorf("%s count = %d, want %d", name, m[name].Count, want)
		}
	}
	if s := m["ws_session_duration"]; s.Min < 20 {
		t.Errorf("ws_session_duration min = %vms, want >= the 20ms the socket's timer waited", s.Min)
	}
	if ch := r.Phases()[0].Checks(); len(ch) != 1 || ch[0].Pass != 2 {
		t.Errorf("checks = %+v", ch)
	}
}

// TestWebSocketsModule: the browser-style WebSocket on the VU's event
// loop: listeners and on* handlers, text, ArrayBuffer and Blob sends,
// binaryType, readyState, ping/pong, close; the iteration ends when the
// socket has closed.
func TestWebSocketsModule(t *testing.T) {
	base := startEcho(t)
	var out consoleLines
	path := writeScript(t, "wsb.js", `
import { WebSocket, Blob } from 'k6/experimental/websockets';
import { WebSocket as WS2 } from 'k6/websockets';
export const options = { iterations: 1 };
export default function () {
  const ws = new WebSocket(__ENV.BASE + '/echo');
  console.log('state', ws.readyState, ws.readyState === WebSocket.CONNECTING, typeof WS2 === 'function');
  ws.binaryType = 'arraybuffer';
  const seen = [];
  ws.onopen = () => {
    console.log('open', ws.readyState === ws.OPEN);
    ws.send('text');
    ws.send(new Uint8Array([7, 8]).buffer);
    ws.send(new Blob(['ab', new Uint8Array([99])]));
    ws.ping();
  };
  ws.addEventListener('message', (e) => {
    seen.push(typeof e.data === 'string' ? e.data : new Uint8Array(e.data).join(','));
    if (seen.length === 3) {
      ws.binaryType = 'blob';
      ws.send(new Uint8Array([1]));
    }
    if (seen.length === 4) {
      e.data.text().then((t) => { console.log('blob', e.data.size, JSON.stringify(t)); ws.close(); });
    }
  });
  ws.addEventListener('pong', () => console.log('pong'));
  ws.onclose = (e) => console.log('closed', e.code, e.wasClean, ws.readyState, seen.slice(0, 3).join(' '));
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	c := r.Phases()[0].Counts()
	if c.IterOK != 1 || c.OK != 5 || c.Failed != 0 {
		t.Fatalf("counts = %+v, want 1 ok iteration: a handshake and 4 messages", c)
	}
	got := out.all()
	want := []string{"state 0 true true", "open true", "pong", "blob 1 \"\\u0001\"", "closed 1000 true 3 text 7,8 97,98,99"}
	if !slices.Equal(got, want) {
		t.Fatalf("console = %q, want %q", got, want)
	}
	if n := metricStats(r)["ws_msgs_received"].Count; n != 4 {
		t.Errorf("ws_msgs_received = %d, want 4", n)
	}
}

// TestWebSocketShedAndRefused: a handshake answered 503 is a failed
// attempt of class 5xx (k6/ws throws, the WebSocket gets error and
// close); one to a closed port is class refused.
func TestWebSocketShedAndRefused(t *testing.T) {
	base := startEcho(t)
	closed := "ws://" + closedAddr(t)
	var out consoleLines
	path := writeScript(t, "shed.js", `
import ws from 'k6/ws';
import { WebSocket } from 'k6/websockets';
export const options = { iterations: 1 };
export default function () {
  try {
    ws.connect(__ENV.BASE + '/shed', () => {});
  } catch (e) {
    console.log('threw', String(e).includes('503'));
  }
  const s = new WebSocket(__ENV.CLOSED);
  s.onerror = (e) => console.log('error', typeof e.error);
  s.onclose = (e) => console.log('close', e.code, s.readyState);
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add, Env: map[string]string{"CLOSED": closed}}, 30*time.Second)
	c := r.Phases()[0].Counts()
	if c.IterFailed != 1 || c.Failed != 2 || c.Classes[engine.Class5xx] != 1 || c.Classes[engine.ClassRefused] != 1 {
		t.Fatalf("counts = %+v, want one failed iteration: a 5xx and a refused attempt", c)
	}
	if got := out.all(); !slices.Equal(got, []string{"threw true", "error string", "close 1006 3"}) {
		t.Fatalf("console = %q", got)
	}
}

// TestWebSocketRefusals: what throttle does not provide is named.
func TestWebSocketRefusals(t *testing.T) {
	base := startEcho(t)
	for name, src := range map[string]string{
		"params.jar":            `ws.connect(__ENV.BASE + '/echo', { jar: {} }, () => {})`,
		"protocols argument":    `new WebSocket(__ENV.BASE + '/echo', ['chat'])`,
		"Blob.stream()":         `new Blob(['x']).stream()`,
		"unknown event \"msg\"": `ws.connect(__ENV.BASE + '/echo', (s) => s.on('msg', () => {}))`,
	} {
		var out consoleLines
		path := writeScript(t, "refuse.js", `
import ws from 'k6/ws';
import { WebSocket, Blob } from 'k6/websockets';
export const options = { iterations: 1 };
export default function () {
  try { `+src+`; } catch (e) { console.log(String(e)); }
}
`)
		runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
		if got := out.all(); len(got) != 1 || !strings.Contains(got[0], name) {
			t.Errorf("%s: console = %q, want the refusal naming it", name, got)
		}
	}
}

// TestWebSocketAbortEndsSession: a session the server never closes ends
// when the scenario's graceful stop runs out, in both modules (the run
// ends; TestMain finds no reader left). ws.connect's session is timed as
// it ends; the event loop's is dropped with the aborted iteration.
func TestWebSocketAbortEndsSession(t *testing.T) {
	base := startEcho(t)
	path := writeScript(t, "abort.js", `
import ws from 'k6/ws';
import { WebSocket } from 'k6/websockets';
export const options = { scenarios: {
  blocking: { executor: 'constant-vus', vus: 1, duration: '300ms', gracefulStop: '0s', exec: 'blocking' },
  loop: { executor: 'constant-vus', vus: 1, duration: '300ms', gracefulStop: '0s', exec: 'loop' },
} };
export function blocking() { ws.connect(__ENV.BASE + '/echo', (s) => s.on('open', () => s.send('x'))); }
export function loop() { new WebSocket(__ENV.BASE + '/echo'); }
`)
	r, _ := runScript(t, path, base, Config{}, 30*time.Second)
	m := metricStats(r)
	if m["ws_sessions"].Count != 2 || m["ws_session_duration"].Count != 1 {
		t.Fatalf("ws_sessions %d, ws_session_duration %d: want 2 sessions opened, ws.connect's timed when the abort ended it",
			m["ws_sessions"].Count, m["ws_session_duration"].Count)
	}
}
