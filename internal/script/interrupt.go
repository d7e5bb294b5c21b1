package script

import (
	"errors"
	"strings"

	"github.com/grafana/sobek"
)

// ErrInterrupted is a load stopped by Config.Interrupt while the init
// context still ran.
var ErrInterrupted = errors.New("script: interrupted while running the init context")

// initInterruptible runs the VU's init context; closing interrupt stops
// it wherever it is (a loop that never ends included).
func (vu *VU) initInterruptible(interrupt <-chan struct{}) error {
	if interrupt == nil {
		return vu.init()
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-interrupt:
			vu.rt.Interrupt(ErrInterrupted)
		case <-done:
		}
	}()
	err := vu.init()
	// The event loop hands the interruption back as text, so it is
	// recognised by its message.
	var ie *sobek.InterruptedError
	if errors.As(err, &ie) || err != nil && strings.Contains(err.Error(), ErrInterrupted.Error()) {
		return ErrInterrupted
	}
	return err
}
