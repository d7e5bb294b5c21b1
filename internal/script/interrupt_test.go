package script

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A script that loops forever at top level ends when Interrupt closes,
// with ErrInterrupted, one line.
func TestInterruptInit(t *testing.T) {
	path := writeScript(t, "loop.js", `
export const options = { iterations: 1 };
let n = 0;
while (true) { n++; }
export default function () {}
`)
	interrupt := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Load(path, Config{Interrupt: interrupt})
		done <- err
	}()
	close(interrupt) // whether the loop has started or not, Load must end
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("err %v, want ErrInterrupted", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Load did not end after the interrupt")
	}
}

// A top-level loop stopped by the interrupt names the line it was on; a
// top-level loop that allocates without end is stopped once the heap
// passes InitMemory, naming its line too, as an exception in the init
// context.
func TestInitStoppedWhere(t *testing.T) {
	path := writeScript(t, "spin.js", `
export const options = { iterations: 1 };
let n = 0;
console.log('looping'); while (true) { n++; }
export default function () {}
`)
	interrupt := make(chan struct{})
	done := make(chan error, 1)
	// Close the interrupt once the loop's line runs: the log call is on
	// that line too, so the interrupt names it whether it lands in the
	// call's return or in the loop.
	console := func(_ slog.Level, msg string) {
		if msg == "looping" {
			close(interrupt)
		}
	}
	go func() {
		_, err := Load(path, Config{Interrupt: interrupt, Console: console})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "spin.js:4") {
			t.Fatalf("err %v: want ErrInterrupted at spin.js:4", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Load did not end after the interrupt")
	}

	path = writeScript(t, "grow.js", `
export const options = { iterations: 1 };
const keep = [];
while (true) { keep.push(new Array(1024).fill(keep.length)); }
export default function () {}
`)
	_, err := Load(path, Config{InitMemory: 64 << 20})
	var ie *InitError
	if !errors.Is(err, ErrInitMemory) || !errors.As(err, &ie) || !strings.Contains(err.Error(), "grow.js:4") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v: want ErrInitMemory at grow.js:4, one line, as an init error", err)
	}
}

// A top-level loop that never ends is stopped by the init timeout, with
// one line naming where it was, as an init error (k6's 107); so is the
// init context of a later VU that loops where the first did not, which
// fails the run instead of holding it.
func TestInitTimeout(t *testing.T) {
	path := writeScript(t, "forever.js", `
export const options = { iterations: 1 };
let n = 0;
while (true) { n++; }
export default function () {}
`)
	_, err := Load(path, Config{InitTimeout: 200 * time.Millisecond})
	var ie *InitError
	if !errors.Is(err, ErrInitTimeout) || !errors.As(err, &ie) || !strings.Contains(err.Error(), "forever.js:4") ||
		!strings.Contains(err.Error(), "200ms") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v: want ErrInitTimeout after 200ms at forever.js:4, one line, as an init error", err)
	}

	path = writeScript(t, "vu2.js", `
let n = 0;
if (__VU === 2) { while (true) { n++; } }
export const options = { scenarios: { s: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } } };
export default function () {}
`)
	r, err := Load(path, Config{InitTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = r.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("the run did not end by itself")
	}
	if !errors.Is(err, ErrInitTimeout) || !strings.Contains(err.Error(), "vu2.js:3") {
		t.Fatalf("err %v: want VU 2's init context stopped by the timeout at vu2.js:3", err)
	}
}

// An init context within its timeout runs as it is: a busy but finite
// top-level loop is no problem.
func TestInitTimeoutNotReached(t *testing.T) {
	path := writeScript(t, "busy.js", `
export const options = { iterations: 1 };
let n = 0;
for (let i = 0; i < 1e5; i++) { n += i; }
export default function () {}
`)
	if _, err := Load(path, Config{InitTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}
