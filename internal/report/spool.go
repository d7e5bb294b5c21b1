package report

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Earlier sums up the windows of a run that closed before Input.Windows:
// a phase holds only its newest KeepWindows windows (phase.Earlier).
type Earlier struct {
	// Windows counts them, Saturated those above the failure bound.
	Windows, Saturated int
	// First is the run's first window.
	First governor.Window
	// Outages are the outage intervals among them.
	Outages [][2]time.Time
}

// Spool streams a phase's windows, with their latency, to a temporary file
// as they close (Recorder's WithWindowSink(spool.Add)), so that the CSV
// timeline of a run longer than KeepWindows windows still has every one
// while memory holds only the newest. Build takes it as Input.Timeline;
// Close removes the file. It is safe for concurrent use.
type Spool struct {
	mu  sync.Mutex
	f   *os.File
	bw  *bufio.Writer
	enc *gob.Encoder
	n   int
	err error
}

type spooled struct {
	W governor.Window
	L Latency
	M uint64 // missed arrivals (WindowLatency.Missed)
}

// NewSpool makes a spool in dir (the timeline's directory: the same disk).
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, ".throttle-timeline-*.spool")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	bw := bufio.NewWriter(f)
	return &Spool{f: f, bw: bw, enc: gob.NewEncoder(bw)}, nil
}

// Add appends one closed window; the first write error is kept and
// returned by the timeline's writer.
func (s *Spool) Add(w governor.Window, l WindowLatency) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.f == nil {
		return
	}
	if err := s.enc.Encode(spooled{w, l.Latency, l.Missed}); err != nil {
		s.err = err
		return
	}
	s.n++
}

// Len is how many windows the spool holds.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// each calls fn with every spooled window, in order.
func (s *Spool) each(fn func(i int, w governor.Window, l Latency, missed uint64) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return errors.New("report: timeline spool closed")
	}
	if s.err != nil {
		return fmt.Errorf("report: timeline spool: %w", s.err)
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("report: timeline spool: %w", err)
	}
	r, err := os.Open(s.f.Name())
	if err != nil {
		return fmt.Errorf("report: timeline spool: %w", err)
	}
	defer r.Close()
	dec := gob.NewDecoder(bufio.NewReader(r))
	for i := 0; i < s.n; i++ {
		var x spooled
		if err := dec.Decode(&x); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("report: timeline spool: %w", err)
		}
		if err := fn(i, x.W, x.L, x.M); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the spool's file.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	s.f = nil
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}
