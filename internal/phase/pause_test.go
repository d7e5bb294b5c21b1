package phase

import (
	"runtime"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// Coalesce never shortens a wait (k6's sleep(d) waits at least d), adds
// less than one grid step (0.1 % of d, at most 16 ms), ends on the grid,
// and leaves waits under about a second as they are.
func TestCoalesce(t *testing.T) {
	base := time.Date(2026, 12, 6, 13, 0, 0, 123_456_789, time.UTC)
	for _, d := range []time.Duration{0, time.Microsecond, 10 * time.Millisecond, 999 * time.Millisecond, 1023 * time.Millisecond,
		1024 * time.Millisecond, 1500 * time.Millisecond, 2 * time.Second, 5 * time.Second, 20 * time.Second, time.Hour} {
		step := time.Duration(0)
		for s := time.Millisecond; s <= d/1024 && s <= coalesceMax; s *= 2 {
			step = s
		}
		for i := range 200 {
			now := base.Add(time.Duration(i) * 777_777 * time.Nanosecond)
			got := Coalesce(now, d)
			if step == 0 {
				if got != d {
					t.Fatalf("Coalesce(%v) = %v: a wait under 1.024 s changed", d, got)
				}
				continue
			}
			if got < d || got >= d+step {
				t.Fatalf("Coalesce(%v) at %v = %v: want in [%v, %v)", d, now, got, d, d+step)
			}
			if end := now.Add(got).UnixNano(); end%int64(step) != 0 {
				t.Fatalf("Coalesce(%v) at %v ends at %d, not on the %v grid", d, now, end, step)
			}
		}
	}
	if got := Coalesce(base, time.Hour) - time.Hour; got >= coalesceMax {
		t.Fatalf("an hour's wait grew by %v, want < %v", got, coalesceMax)
	}
	// Two workers whose 20 s sleeps end 3 ms apart, inside one 16 ms
	// step, wake at one instant.
	a := time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC).Add(time.Millisecond)
	b := a.Add(3 * time.Millisecond)
	if ea, eb := a.Add(Coalesce(a, 20*time.Second)), b.Add(Coalesce(b, 20*time.Second)); !ea.Equal(eb) {
		t.Fatalf("ends %v and %v: want one instant", ea, eb)
	}
}

// WaitCoalesced waits at least d on the real clock, and an abort still
// ends it at once.
func TestWaitCoalesced(t *testing.T) {
	var p Pause
	defer p.Stop()
	d := 1100 * time.Millisecond // long enough to be rounded up
	start := time.Now()
	if !p.WaitCoalesced(d, nil, nil) {
		t.Fatal("a wait with no stop ended early")
	}
	if took := time.Since(start); took < d {
		t.Fatalf("waited %v, want at least %v", took, d)
	}
	abort := make(chan struct{})
	close(abort)
	if p.WaitCoalesced(time.Hour, nil, abort) {
		t.Fatal("an aborted wait said its whole time passed")
	}
}

// SleepCoalesced waits at least d, however many wakes come while the
// abort is open; an abort closed before it begins ends it at once, and a
// Wake after the abort closes ends it.
func TestSleepCoalesced(t *testing.T) {
	var p Pause
	defer p.Stop()
	p.Wake() // no timer yet: nothing to do
	stop := make(chan struct{})
	waking := make(chan struct{})
	go func() {
		defer close(waking)
		for !closed(stop) {
			p.Wake()
			runtime.Gosched()
		}
	}()
	start := time.Now()
	d := 50 * time.Millisecond
	ok := p.SleepCoalesced(d, nil)
	close(stop)
	<-waking
	if !ok {
		t.Fatal("a sleep with no abort ended early")
	}
	if took := time.Since(start); took < d {
		t.Fatalf("slept %v under wakes, want at least %v", took, d)
	}

	abort := make(chan struct{})
	asleep := make(chan bool)
	go func() { asleep <- p.SleepCoalesced(time.Hour, abort) }()
	close(abort)
	p.Wake()
	if testwait.Receive(t, asleep, "the aborted sleep's end") {
		t.Fatal("an aborted sleep said its whole time passed")
	}
	if p.SleepCoalesced(time.Hour, abort) {
		t.Fatal("a sleep begun after the abort said its whole time passed")
	}
}
