package script

import (
	"errors"
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
