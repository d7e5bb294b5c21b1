package script

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEventLoopTimersAndAsync: timers (global and k6/timers) run before the
// iteration ends, in time order; an async default function's awaits are
// settled; async setup hands its resolved value to the VUs; top-level
// await is settled by a timer; teardown and handleSummary may be async.
func TestEventLoopTimersAndAsync(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "async.js", `
import { setTimeout as st, clearTimeout as ct } from 'k6/timers';
const sleepMs = (ms) => new Promise((res) => setTimeout(res, ms));
await sleepMs(5);
const ready = 'ready';
export const options = { iterations: 1 };
export async function setup() {
  await sleepMs(5);
  return { token: 'abc' };
}
export default async function (data) {
  st(() => console.log('late'), 20);
  setTimeout((a, b) => console.log('early', a + b), 1, 2, 3);
  const cancelled = st(() => console.log('never'), 1);
  ct(cancelled);
  let n = 0;
  const id = setInterval(() => { n++; if (n === 3) { clearInterval(id); console.log('interval', n); } }, 1);
  await sleepMs(2);
  console.log('data', data.token, ready);
}
export async function teardown(data) {
  await sleepMs(1);
  console.log('teardown', data.token);
}
export async function handleSummary() {
  await sleepMs(1);
  return { stdout: 'summary' };
}
`)
	r, res := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	c := r.Phases()[0].Counts()
	if c.IterOK != 1 || c.IterFailed != 0 {
		t.Fatalf("counts = %+v, want one ok iteration", c)
	}
	got := out.all()
	for _, want := range []string{"early 5", "interval 3", "data abc ready", "late", "teardown abc"} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q, want %q among it", got, want)
		}
	}
	if slices.Contains(got, "never") {
		t.Fatalf("a cleared timeout ran: %q", got)
	}
	if i, j := slices.Index(got, "early 5"), slices.Index(got, "late"); i > j {
		t.Fatalf("timers out of order: %q", got)
	}
	if len(res.Outputs) != 1 || string(res.Outputs[0].Data) != "summary" || res.SummaryErr != nil {
		t.Fatalf("handleSummary outputs = %+v, err %v", res.Outputs, res.SummaryErr)
	}
}

// TestEventLoopRejections: an iteration whose promise rejects, or that
// leaves a rejection unhandled, or whose timer callback throws, is a failed
// iteration, logged; a handled rejection is not.
func TestEventLoopRejections(t *testing.T) {
	_, base := startTarget(t, robust())
	var logs logLines
	path := writeScript(t, "reject.js", `
export const options = { iterations: 4 };
export default async function () {
  switch (__ITER) {
  case 0: throw new Error('boom in async');
  case 1: Promise.reject(new Error('nobody catches')); return;
  case 2: setTimeout(() => { throw new Error('timer threw'); }, 1); return;
  case 3: await Promise.reject(new Error('caught')).catch(() => {}); return;
  }
}
`)
	r, _ := runScript(t, path, base, Config{Logger: logs.logger()}, 30*time.Second)
	c := r.Phases()[0].Counts()
	if c.IterOK != 1 || c.IterFailed != 3 {
		t.Fatalf("counts = %+v, want 1 ok and 3 failed iterations", c)
	}
	text := logs.String()
	t.Log(text)
	for _, want := range []string{"boom in async", "Uncaught (in promise) Error: nobody catches", "timer threw"} {
		if !strings.Contains(text, want) {
			t.Fatalf("log lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Error: caught") {
		t.Fatalf("a handled rejection was logged:\n%s", text)
	}
}

// logLines collects the runner's log lines as text.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logLines) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// TestAsyncRequest: http.asyncRequest's promises settle with Responses,
// counted as requests; awaited together they are all in flight at once.
func TestAsyncRequest(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "areq.js", `
import http from 'k6/http';
import { check } from 'k6';
export const options = { iterations: 2 };
export default async function () {
  const [a, b] = await Promise.all([
    http.asyncRequest('GET', __ENV.BASE + '/a'),
    http.asyncRequest('post', __ENV.BASE + '/b', 'body', { tags: { name: 'bee' } }),
  ]);
  check(a, { 'a 200': (r) => r.status === 200 });
  console.log(a.request.method, b.request.method, b.status);
  const bad = await http.asyncRequest('GET', 'http://127.0.0.1:1/');
  console.log('bad', bad.status, bad.error_code > 0);
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	c := r.Phases()[0].Counts()
	if c.IterOK != 0 || c.IterFailed != 2 || c.OK != 4 || c.Failed != 2 {
		t.Fatalf("counts = %+v, want 4 ok and 2 failed requests, the iterations failed by the refused one", c)
	}
	got := out.all()
	if !slices.Contains(got, "GET POST 200") || !slices.Contains(got, "bad 0 true") {
		t.Fatalf("console = %q", got)
	}
}
