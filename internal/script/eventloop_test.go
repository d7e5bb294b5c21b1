package script

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
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
	var logs testwait.Buffer
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
	r, _ := runScript(t, path, base, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, 30*time.Second)
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
