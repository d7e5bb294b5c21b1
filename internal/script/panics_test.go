package script

import (
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/protoecho"
	"github.com/throttlekit/throttle/internal/script/protohost"
)

// withSitePanic makes the module goroutine named site (protohost's
// Checkpoint) panic every time it passes there, as a bug would, for the
// test's duration.
func withSitePanic(t *testing.T, site string) {
	protohost.SetTestPanic(func(s string) {
		if s == site {
			var m map[string]int
			m["boom"]++ // a nil map: a runtime panic, as a real bug makes
		}
	})
	t.Cleanup(func() { protohost.SetTestPanic(nil) })
}

// summaryJS is a handleSummary that writes the iterations counted, so a
// test sees the summary was made after the panics.
const summaryJS = `
export function handleSummary(data) {
  return { stdout: 'iterations ' + data.metrics.iterations.values.count };
}
`

// recovered checks what every recovered panic leaves: the run ended by
// itself, the panics counted (want, or at least one if want < 0), the
// first logged once naming where (in) and what, and the summary written
// with the iterations the run made.
func recovered(t *testing.T, r *Runner, res *RunResult, logged, in string, want int64, iterations string) {
	t.Helper()
	if res.Interrupted || res.Aborted {
		t.Fatalf("the run did not go on: %+v", res)
	}
	if n := r.Panics(); want >= 0 && n != want || n < 1 {
		t.Fatalf("%d panics recovered, want %d", n, want)
	}
	if strings.Count(logged, "Go panic") != 1 || !strings.Contains(logged, "in "+in+":") ||
		!strings.Contains(logged, "_test.go:") || !strings.Contains(logged, "assignment to entry in nil map") {
		t.Fatalf("want the panic logged once, in %s, with its site and value, got:\n%s", in, logged)
	}
	if res.SummaryErr != nil || len(res.Outputs) != 1 || string(res.Outputs[0].Data) != "iterations "+iterations {
		t.Fatalf("summary: err %v, outputs %q", res.SummaryErr, res.Outputs)
	}
}

// A Go panic in one VU's init context loses that VU only: it is logged
// once and counted, the other VU runs its iterations, and the summary is
// written.
func TestVUInitPanicRecovered(t *testing.T) {
	withPanicHook(t)
	_, base := startTarget(t, robust())
	path := writeScript(t, "init.js", `
import http from 'k6/http';
if (__VU === 2) { __hostPanic(); }
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 3 } } };
export default function () { http.get(__ENV.BASE + '/'); }
`+summaryJS)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log}, time.Minute)
	recovered(t, r, res, buf.String(), "a VU's init context", 1, "3")
	if c := r.Phases()[0].Counts(); c.IterOK != 3 || c.Classes[engine.ClassOK] != 3 {
		t.Fatalf("counts %+v: want VU 1's 3 iterations ok", c)
	}
}

// A Go panic on an async HTTP lane fails that iteration, is logged once
// and counted; the VU's other iterations (sync requests) run on.
func TestAsyncLanePanicRecovered(t *testing.T) {
	withSitePanic(t, "http.async")
	_, base := startTarget(t, robust())
	path := writeScript(t, "async.js", `
import http from 'k6/http';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 4 } } };
export default async function () {
  if (__ITER % 2 === 0) {
    await http.asyncRequest('GET', __ENV.BASE + '/');
  } else {
    http.get(__ENV.BASE + '/');
  }
}
`+summaryJS)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log}, time.Minute)
	recovered(t, r, res, buf.String(), "an async HTTP lane", 2, "4")
	if c := r.Phases()[0].Counts(); c.IterOK != 2 || c.IterFailed != 2 {
		t.Fatalf("counts %+v: want the 2 async iterations failed, the 2 sync ones ok", c)
	}
}

// A Go panic in a WebSocket's reading goroutine drops that session: the
// script sees error and close 1006, a failed attempt of class other;
// the next iteration connects again and the summary is written.
func TestWebSocketReaderPanicRecovered(t *testing.T) {
	withSitePanic(t, "ws.read")
	base := startEcho(t)
	var out consoleLines
	path := writeScript(t, "ws.js", `
import ws from 'k6/ws';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default function () {
  ws.connect(__ENV.BASE + '/echo', {}, function (socket) {
    socket.on('open', () => socket.send('a'));
    socket.on('message', () => socket.close());
    socket.on('error', (e) => console.log('error', e.error().includes('Go panic')));
    socket.on('close', (code) => console.log('close', code));
  });
}
`+summaryJS)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log, Console: out.add}, time.Minute)
	recovered(t, r, res, buf.String(), "a WebSocket reader", 2, "2")
	if got := strings.Join(out.all(), "|"); got != "error true|close 1006|error true|close 1006" {
		t.Fatalf("console = %q", got)
	}
	// Per iteration: the handshake and the message sent ok, the session
	// the panic dropped failed.
	if c := r.Phases()[0].Counts(); c.OK != 4 || c.Failed != 2 || c.Classes[engine.ClassOther] != 2 {
		t.Fatalf("counts = %+v", c)
	}
}

// A Go panic in a gRPC stream's reading goroutine ends that stream failed
// (error with status Unknown, then end; class other); the next iteration
// streams again and the summary is written.
func TestGRPCStreamPanicRecovered(t *testing.T) {
	withSitePanic(t, "grpc.stream")
	addr := startGRPC(t)
	var out consoleLines
	path := writeScript(t, "stream.js", `
import { Client, Stream, StatusUnknown } from 'k6/net/grpc';
const client = new Client();
client.load([], 'echo.proto');
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const stream = new Stream(client, 'throttle.echo.Echo/Chat');
  stream.on('data', (msg) => console.log('data', msg.text));
  stream.on('error', (e) => console.log('error', e.code === StatusUnknown, e.message.includes('Go panic')));
  stream.on('end', () => { console.log('end'); client.close(); });
  stream.write({ text: 'a' });
  stream.end();
}
`+summaryJS, "echo.proto", protoecho.Proto)
	log, buf := bufLogger()
	r, res := runScript(t, path, "", Config{Logger: log, Console: out.add, Env: map[string]string{"ADDR": addr}}, time.Minute)
	recovered(t, r, res, buf.String(), "a gRPC stream", 2, "2")
	if got := strings.Join(out.all(), "|"); got != "error true true|end|error true true|end" {
		t.Fatalf("console = %q", got)
	}
	if c := r.Phases()[0].Counts(); c.OK != 2 || c.Failed != 2 || c.Classes[engine.ClassOther] != 2 {
		t.Fatalf("counts = %+v: want 2 ok connects, 2 streams failed (other)", c)
	}
}

// A Go panic in a browser-style WebSocket's handshake goroutine fails
// that handshake (class other): the socket gets error and close 1006, and
// the next iteration goes on.
func TestWebSocketHandshakePanicRecovered(t *testing.T) {
	withSitePanic(t, "ws.handshake")
	base := startEcho(t)
	var out consoleLines
	path := writeScript(t, "wsh.js", `
import { WebSocket } from 'k6/websockets';
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default function () {
  const ws = new WebSocket(__ENV.BASE + '/echo');
  ws.onopen = () => console.log('unexpected open');
  ws.onerror = () => console.log('error');
  ws.onclose = (e) => console.log('closed', e.code);
}
`+summaryJS)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log, Console: out.add}, time.Minute)
	recovered(t, r, res, buf.String(), "a WebSocket handshake", 2, "2")
	if got := strings.Join(out.all(), "|"); got != "error|closed 1006|error|closed 1006" {
		t.Fatalf("console = %q", got)
	}
	if c := r.Phases()[0].Counts(); c.OK != 0 || c.Failed != 2 || c.Classes[engine.ClassOther] != 2 {
		t.Fatalf("counts = %+v: want the 2 handshakes failed, class other", c)
	}
}

// A Go panic on a gRPC asyncInvoke's goroutine settles its promise with
// a response of status Unknown (class other); the run goes on.
func TestGRPCAsyncInvokePanicRecovered(t *testing.T) {
	withSitePanic(t, "grpc.async")
	addr := startGRPC(t)
	var out consoleLines
	path := writeScript(t, "async.js", `
import { Client, StatusUnknown } from 'k6/net/grpc';
const client = new Client();
client.load([], 'echo.proto');
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 2 } } };
export default async function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const res = await client.asyncInvoke('throttle.echo.Echo/Say', { text: 'x' });
  console.log('async', res.status === StatusUnknown, res.error.message.includes('Go panic'));
  client.close();
}
`+summaryJS, "echo.proto", protoecho.Proto)
	log, buf := bufLogger()
	r, res := runScript(t, path, "", Config{Logger: log, Console: out.add, Env: map[string]string{"ADDR": addr}}, time.Minute)
	recovered(t, r, res, buf.String(), "a gRPC asyncInvoke", 2, "2")
	if got := strings.Join(out.all(), "|"); got != "async true true|async true true" {
		t.Fatalf("console = %q", got)
	}
	if c := r.Phases()[0].Counts(); c.OK != 2 || c.Failed != 2 || c.Classes[engine.ClassOther] != 2 {
		t.Fatalf("counts = %+v: want 2 ok connects, 2 calls failed (other)", c)
	}
}

// A Go panic on an http.batch goroutine fails that request and the
// iteration (logged once, counted every time) once the batch's other
// goroutines are back; the lanes it left are remade, and the VU's next
// requests go out.
func TestBatchPanicRecovered(t *testing.T) {
	withSitePanic(t, "http.batch")
	_, base := startTarget(t, robust())
	path := writeScript(t, "batch.js", `
import http from 'k6/http';
export const options = { batch: 2, scenarios: { s: { executor: 'per-vu-iterations', vus: 1, iterations: 4 } } };
export default function () {
  if (__ITER % 2 === 0) {
    http.batch([__ENV.BASE + '/a', __ENV.BASE + '/b', __ENV.BASE + '/c']);
  } else {
    http.get(__ENV.BASE + '/');
  }
}
`+summaryJS)
	log, buf := bufLogger()
	r, res := runScript(t, path, base, Config{Logger: log}, time.Minute)
	recovered(t, r, res, buf.String(), "an http.batch request", 6, "4")
	if c := r.Phases()[0].Counts(); c.IterOK != 2 || c.IterFailed != 2 || c.Classes[engine.ClassOK] != 2 {
		t.Fatalf("counts %+v: want the 2 batch iterations failed, the 2 sync ones ok", c)
	}
}
