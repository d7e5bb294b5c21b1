package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// finals records the sends of ship: the final one's error text.
type finals struct {
	mu    sync.Mutex
	final string
	sends int
}

func (f *finals) send(final bool, errText string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
	if final {
		f.final = errText
	}
}

// An agent that hears nothing from the controller for the silence stops
// its run, and its final delta says the run was cut short (the controller
// may be stalled, not gone: its report must not take the part for whole).
func TestShipSilenceCutsShort(t *testing.T) {
	var f finals
	run := func(ctx context.Context) error { <-ctx.Done(); return nil }
	never := make(chan struct{})
	done := make(chan string, 1)
	go func() {
		why, _ := ship(context.Background(), run, f.send, 5*time.Millisecond, 30*time.Millisecond, never, never, never, func() {})
		done <- why
	}()
	why := testwait.Receive(t, done, "the silenced run's end")
	if !strings.Contains(why, "silent") || !strings.Contains(f.final, "cut short") || !strings.Contains(f.final, "silent") {
		t.Fatalf("why %q, final error %q: want the silence named and the run said cut short", why, f.final)
	}
}

// A controller heard while a slow send ran is not silent: ship looks at
// what was heard before judging the silence.
func TestShipHeardDuringSlowSend(t *testing.T) {
	heard := make(chan struct{}, 1)
	stop := make(chan struct{})
	var f finals
	var n int
	send := func(final bool, errText string) {
		f.send(final, errText)
		n++
		if !final && n <= 3 {
			// Slower than the silence, the controller heard meanwhile.
			time.Sleep(300 * time.Millisecond)
			select {
			case heard <- struct{}{}:
			default:
			}
		}
		if n == 3 {
			close(stop)
		}
	}
	run := func(ctx context.Context) error { <-ctx.Done(); return nil }
	never := make(chan struct{})
	done := make(chan string, 1)
	go func() {
		why, _ := ship(context.Background(), run, send, 5*time.Millisecond, 200*time.Millisecond, heard, stop, never, func() {})
		done <- why
	}()
	why := testwait.Receive(t, done, "the stopped run's end")
	if why != "the controller stopped the run" || f.final != "" {
		t.Fatalf("why %q, final error %q: want the controller's stop and no error", why, f.final)
	}
}

// The agents' server waits WriteDeadline, not its 10 s default, on a
// client that does not read before closing it as a slow consumer: the
// controller's in-process connection stalls that long while a loaded
// machine makes tens of thousands of VUs.
func TestServerWriteDeadline(t *testing.T) {
	srv, err := serve("127.0.0.1:0", testToken, TLS{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	v, err := srv.Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.WriteDeadline != WriteDeadline {
		t.Fatalf("write deadline %v, want %v", v.WriteDeadline, WriteDeadline)
	}
}
