package script

import (
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
