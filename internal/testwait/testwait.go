// Package testwait is how the module's real-clock tests wait: for a
// condition, polled until a generous deadline, never for a fixed sleep; and
// on an output buffer that the test can read while the program under test
// still writes to it. It never stands in for time passing in a timing rule:
// those are tested exactly on clock.Fake.
package testwait

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// Deadline is how long a real-clock test waits for an event before it fails.
// It is generous on purpose: on an idle machine the events come in well
// under a second, and the suite must hold on a loaded 2-core machine running
// it twice at once. A test that waits this long has found a real hang.
const Deadline = 30 * time.Second

// poll is how often Until looks again.
const poll = 5 * time.Millisecond

// Until polls cond until it holds and fails t (naming what it waited for)
// when limit passes first. It reports how long the wait took.
func Until(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	begin := time.Now()
	for !cond() {
		if time.Since(begin) > limit {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(poll)
	}
	return time.Since(begin)
}

// Receive waits up to Deadline for a value on ch (or for ch to close) and
// returns it; it fails t, naming what it waited for, when none comes.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Deadline)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %v waiting for %s", Deadline, what)
		panic("unreachable: Fatalf ends the test")
	}
}

// Start runs fn on its own goroutine with a context that stop cancels. stop
// waits for fn to return and reports its error; calling it again returns the
// same error. t's cleanup calls stop too, so fn never outlives the test:
// start the servers fn uses before Start, so that (cleanups running last
// first) fn has stopped before they close.
func Start(t testing.TB, fn func(ctx context.Context) error) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// Buffer collects what a program writes and can be read while it writes.
// Its zero value is an empty buffer ready to use; it is safe for concurrent
// use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Contains reports whether everything written so far contains every one of
// subs.
func (b *Buffer) Contains(subs ...string) bool {
	s := b.String()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
