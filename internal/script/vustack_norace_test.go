//go:build !race

// Not in the race detector's build (make test runs it without): there the
// instrumented frames are deeper and the runtime's no-split reserve twice
// as large (1 600 bytes), so a GC halves a 16 KiB stack only under 2 496
// bytes in use, which no VU asleep under sobek's frames is. The claim
// tested is about the build that runs load.

package script

import (
	"testing"

	"github.com/throttlekit/throttle/internal/teststack"
)

// vuPhaseFrames is the stack the phase runtime's worker uses above
// VU.iteration in the CLI: spawn's goroutine 160 bytes, spawnTo's body 64,
// Phase.loop 272, vuWorker.Iterate 24 (GOTRACEBACK=system; docs/
// performance.md, "A sleeping VU's stack").
const vuPhaseFrames = 160 + 64 + 272 + 24

// vuAsleepMargin is how much deeper a VU asleep could be and still have
// its stack halved by a GC: room for a one-off frame the sleeping path
// gains (a Go or sobek version's frames, a wrapper).
const vuAsleepMargin = 512

// A VU asleep in sleep() after its request (bench/vus.sh's script), under
// the phase's frames and vuAsleepMargin more, has its stack halved from 16
// KiB to 8 by a GC: a VU whose stack grew once (a TLS handshake, a group's
// frames, a GC started at a deep point) goes back to 8 KiB at the next
// GC instead of keeping 16 for good. On main before this test, a VU asleep
// used 3 272 of the 3 296 bytes a GC allows.
func TestVUAsleepHalves(t *testing.T) {
	r, vu := targetVU(t, sleepingScript)
	// Each iteration is cut off in its sleep (interrupt), so each sends
	// its request on a fresh lane: a connect, then the request.
	if !teststack.HalvedAsleep(t, vuPhaseFrames+vuAsleepMargin, "(*VU).sleep", vu.iteration, vu.interrupt) {
		t.Errorf("a VU asleep under %d bytes of frames keeps a 16 KiB stack through a GC", vuPhaseFrames+vuAsleepMargin)
	}
	if c := r.Phases()[0].Checks(); len(c) != 1 || c[0].Pass != 2 {
		t.Fatalf("checks %+v: want the two iterations' checks passed", c)
	}
}

// A VU's first iteration (bench/vus.sh's, without its sleeps: the module
// members it reads first, its request's connect and wire request, the
// check) fits the 8 KiB stack reserveVUStack grows it to at the
// iteration's start, under the phase's frames: the stack grows once, while
// shallow, not again under sobek's frames.
func TestVUFirstIterationFitsReserve(t *testing.T) {
	_, vu := targetVU(t, firstIterScript)
	if teststack.Grows(t, vuPhaseFrames, vu.iteration) {
		t.Errorf("a VU's first iteration under %d bytes of frames grew an 8 KiB stack", vuPhaseFrames)
	}
	if vu.iter != 1 || vu.failed {
		t.Fatalf("iterations %d, failed %v: want one that passed", vu.iter, vu.failed)
	}
}

// targetVU is the VU firstVU makes of src, with BASE a robust target of
// its own.
func targetVU(t *testing.T, src string) (*Runner, *VU) {
	t.Helper()
	_, base := startTarget(t, robust())
	vu := firstVU(t, writeScript(t, "vu.js", src), Config{Env: map[string]string{"BASE": base}})
	return vu.r, vu
}
