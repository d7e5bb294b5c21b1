package script

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// consoleLines collects console output.
type consoleLines struct {
	mu    sync.Mutex
	lines []string
}

func (c *consoleLines) add(_ slog.Level, msg string) {
	c.mu.Lock()
	c.lines = append(c.lines, msg)
	c.mu.Unlock()
}

func (c *consoleLines) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func TestNoOptionsRunsOneIteration(t *testing.T) {
	_, base := startTarget(t, robust())
	var out consoleLines
	path := writeScript(t, "one.js", `
import http from 'k6/http';
import { check } from 'k6';
export default function () {
  const res = http.get(__ENV.BASE + '/');
  check(res, { 'is 200': (r) => r.status === 200 });
  console.log('status', res.status, 'vu', __VU, 'iter', __ITER);
}
`)
	r, _ := runScript(t, path, base, Config{Console: out.add}, 30*time.Second)
	ph := r.Phases()
	if len(ph) != 1 {
		t.Fatalf("phases = %d, want 1", len(ph))
	}
	c := ph[0].Counts()
	if c.IterOK != 1 || c.IterFailed != 0 || c.OK != 1 || c.Failed != 0 {
		t.Fatalf("counts = %+v, want one ok iteration of one ok attempt", c)
	}
	if got := out.all(); len(got) != 1 || got[0] != "status 200 vu 1 iter 0" {
		t.Fatalf("console = %q", got)
	}
	ch := ph[0].Checks()
	if len(ch) != 1 || ch[0].Name != "is 200" || ch[0].Pass != 1 || ch[0].Failed != 0 {
		t.Fatalf("checks = %+v", ch)
	}
	if !strings.Contains(strings.Join(r.Modules(), ","), "k6/http") {
		t.Fatalf("modules = %v", r.Modules())
	}
}
