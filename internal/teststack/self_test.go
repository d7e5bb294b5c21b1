package teststack

import "testing"

//go:noinline
func frame2K() byte {
	var a [2 << 10]byte
	return touch(a[:])
}

//go:noinline
func frame7K() byte {
	var a [7 << 10]byte
	return touch(a[:])
}

// Depth finds a frame's size, to padFrame bytes and the call's own few.
func TestDepthOfAFrame(t *testing.T) {
	if d := Depth(t, func() { frame2K() }); d < 2<<10 || d > 2<<10+2*padFrame+64 {
		t.Errorf("a 2 KiB frame is %d bytes deep", d)
	}
	if d := Depth(t, func() { frame2K(); frame2K() }); d < 2<<10 || d > 2<<10+2*padFrame+64 {
		t.Errorf("two 2 KiB frames one after the other are %d bytes deep", d)
	}
}

// Grows tells a call 8 KiB holds from one it does not, and counts the
// stack in use above the call.
func TestGrows(t *testing.T) {
	if Grows(t, 0, func() { frame2K() }) {
		t.Error("a 2 KiB frame grew an 8 KiB stack")
	}
	if !Grows(t, 0, func() { frame7K() }) {
		t.Error("a 7 KiB frame did not grow an 8 KiB stack")
	}
	if !Grows(t, 5<<10, func() { frame2K() }) {
		t.Error("a 2 KiB frame under 5 KiB did not grow an 8 KiB stack")
	}
}

//go:noinline
func parkIn(ch chan struct{}) { <-ch }

// HalvedAsleep tells a goroutine asleep with little of its stack in use,
// which a GC halves, from one asleep under 4 KiB of frames, which it
// cannot.
func TestHalvedAsleep(t *testing.T) {
	ch := make(chan struct{}, 1)
	f := func() { parkIn(ch) }
	wake := func() { ch <- struct{}{} }
	for _, c := range []struct {
		above int
		want  bool
	}{{0, true}, {1 << 10, true}, {4 << 10, false}} {
		got := HalvedAsleep(t, c.above, "teststack.parkIn", f, wake)
		if got != c.want {
			t.Errorf("asleep under %d bytes: halved %v, want %v", c.above, got, c.want)
		}
	}
}
