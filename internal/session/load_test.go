package session

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A signal the load watch takes just as the init context ends (too late
// for the load to stop on it) is not lost: the load is interrupted all
// the same. The fake load returns success only once the watch has taken
// the signal, the window a real load leaves between init and its return.
func TestLoadKeepsALateSignal(t *testing.T) {
	sig := make(chan os.Signal, 1)
	sig <- os.Interrupt
	_, err := watchLoad(sig, time.Hour, func() {}, func(interrupt <-chan struct{}) (*script.Runner, error) {
		testwait.Receive(t, interrupt, "the watch to take the signal")
		return nil, nil // the init context had ended: the load succeeds
	})
	if !errors.Is(err, script.ErrInterrupted) {
		t.Fatalf("load after a taken signal: %v, want script.ErrInterrupted", err)
	}
	// A load that ends before any signal leaves the signal to the run.
	sig = make(chan os.Signal, 1)
	if _, err := watchLoad(sig, time.Hour, func() {}, func(<-chan struct{}) (*script.Runner, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	sig <- os.Interrupt
	select {
	case <-sig:
	default:
		t.Fatal("a signal after the load was taken by the load's watch")
	}
}
