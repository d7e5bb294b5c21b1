package script

// reserveVUStack grows a VU's goroutine stack to 8 KiB at the start of
// its first iteration, while only the phase runtime's few frames are on
// it. A goroutine starts with the average stack the last GC found in use
// (2 KiB in a process whose VUs have not run yet), and a VU's first
// iteration needs about 6 KiB (its request under sobek's frames): grown
// on the way, the runtime copied the stack twice (2 → 4 → 8 KiB), each
// copy walking every frame above it, sobek's many included, to adjust
// their pointers; grown here, it copies once, a few frames deep. The
// stack is no larger than the iteration would have made it: 8 KiB is
// what a sleeping VU keeps (TestVUAsleepHalves), and one that already
// has 8 KiB or more does not grow here. docs/performance.md, "The first
// iteration's cost (issue 26, session 14)".
//
//go:noinline
func reserveVUStack() byte {
	var frame [4 << 10]byte
	return keepVUFrame(frame[:])
}

//go:noinline
func keepVUFrame(b []byte) byte { return b[len(b)-1] }
