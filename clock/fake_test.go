package clock

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFakeTimerFiresAtItsTime(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(3 * time.Second)
	f.Advance(2 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("fired early")
	default:
	}
	f.Advance(time.Second)
	select {
	case at := <-tm.C():
		if !at.Equal(t0.Add(3 * time.Second)) {
			t.Fatalf("fired with %v", at)
		}
	default:
		t.Fatal("did not fire at its time")
	}
	if tm.Stop() {
		t.Fatal("Stop reported a fired timer as pending")
	}
	if f.Waiters() != 0 {
		t.Fatal("fired timer still pending")
	}
}

func TestFakeTimerStop(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer returned false")
	}
	f.Advance(time.Hour)
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
}

func TestFakeTimerNonPositiveFiresAtOnce(t *testing.T) {
	f := NewFake(t0)
	select {
	case <-f.NewTimer(0).C():
	default:
		t.Fatal("zero timer did not fire")
	}
}

func TestFakeTickerDropsForSlowReader(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	f.Advance(5 * time.Second) // five ticks, nobody reading: one is kept
	if at := <-tk.C(); !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("kept tick %v, want the first", at)
	}
	select {
	case <-tk.C():
		t.Fatal("more than one tick buffered")
	default:
	}
	f.Advance(time.Second)
	if at := <-tk.C(); !at.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("next tick %v", at)
	}
	tk.Stop()
	f.Advance(time.Hour)
	select {
	case <-tk.C():
		t.Fatal("stopped ticker ticked")
	default:
	}
	if !f.Now().Equal(t0.Add(time.Hour + 6*time.Second)) {
		t.Fatalf("Now = %v", f.Now())
	}
}

func TestFakeFiresInTimeOrder(t *testing.T) {
	f := NewFake(t0)
	late, early := f.NewTimer(2*time.Second), f.NewTimer(time.Second)
	f.Advance(3 * time.Second)
	a, b := <-early.C(), <-late.C()
	if !a.Before(b) {
		t.Fatalf("early %v, late %v", a, b)
	}
}

func TestRealClock(t *testing.T) {
	c := Real()
	before := time.Now()
	if now := c.Now(); now.Before(before) {
		t.Fatal("real clock behind time.Now")
	}
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	tk.Stop()
}
