package clock

import (
	"testing"
	"time"
)

func TestFakeTimerReset(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	r, ok := tm.(Resetter)
	if !ok {
		t.Fatal("fake timer does not implement Resetter")
	}
	if !r.Reset(2 * time.Second) {
		t.Error("Reset of a pending timer reported it was not pending")
	}
	f.Advance(time.Second)
	select {
	case <-tm.C():
		t.Fatal("timer fired at its old time after Reset")
	default:
	}
	f.Advance(time.Second)
	select {
	case at := <-tm.C():
		if want := time.Unix(2, 0); !at.Equal(want) {
			t.Errorf("fired at %v, want %v", at, want)
		}
	default:
		t.Fatal("timer did not fire at its reset time")
	}
	if f.Waiters() != 0 {
		t.Errorf("Waiters = %d after firing, want 0", f.Waiters())
	}

	// A fired but unread tick is discarded by Reset.
	f.Advance(0)
	tm2 := f.NewTimer(time.Second)
	f.Advance(time.Second)
	if tm2.(Resetter).Reset(time.Second) {
		t.Error("Reset of a fired timer reported it was pending")
	}
	select {
	case <-tm2.C():
		t.Fatal("stale tick survived Reset")
	default:
	}
	f.Advance(time.Second)
	select {
	case <-tm2.C():
	default:
		t.Fatal("re-armed timer did not fire")
	}

	// A stopped timer can be re-armed; d <= 0 fires at once.
	tm3 := f.NewTimer(time.Second)
	tm3.Stop()
	tm3.(Resetter).Reset(0)
	select {
	case <-tm3.C():
	default:
		t.Fatal("Reset(0) did not fire at once")
	}
	if f.Waiters() != 0 {
		t.Errorf("Waiters = %d, want 0", f.Waiters())
	}
}

func TestRealTimerReset(t *testing.T) {
	tm := Real().NewTimer(time.Hour)
	r, ok := tm.(Resetter)
	if !ok {
		t.Fatal("real timer does not implement Resetter")
	}
	r.Reset(time.Millisecond)
	select {
	case <-tm.C():
	case <-time.After(10 * time.Second):
		t.Fatal("reset real timer did not fire")
	}
}
