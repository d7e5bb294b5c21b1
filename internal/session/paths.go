package session

import (
	"os"

	"github.com/throttlekit/throttle/internal/script"
)

// loadInterruptible loads a script while watching the session's signals:
// a signal during the init context (a top-level loop that never ends, say)
// interrupts it at once, and the run ends with one line.
func (s *Session) loadInterruptible(path string, cfg script.Config) (*script.Runner, error) {
	interrupt, loaded := make(chan struct{}), make(chan struct{})
	defer close(loaded)
	cfg.Interrupt = interrupt
	go func(sig <-chan os.Signal) {
		select {
		case <-sig:
			close(interrupt)
		case <-loaded:
		}
	}(s.Signals)
	return script.Load(path, cfg)
}
