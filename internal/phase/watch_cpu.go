package phase

import "time"

// A tick's CPU reading is the process's CPU time used between two
// readings over the wall time between them. Two things make that ratio
// wrong on a loaded machine unless the readings are taken with care:
//
//   - the wall instant and the CPU time must be read at the same moment:
//     a thread descheduled between the two reads (a 2-core machine shared
//     by several busy processes keeps a thread waiting for milliseconds)
//     books the CPU the process used meanwhile to the tick it closes, and
//     takes it from the next. stamp brackets the CPU read with two clock
//     reads and tries again when they lie apart;
//   - the kernel books a running thread's CPU time to the process at that
//     thread's scheduler tick or context switch, so the process's CPU
//     time lags by up to a scheduler tick (1–10 ms) per thread running on
//     another core. Over a tick of Every that is noise; over a tick cut
//     to a few milliseconds, because the reading before it was late (the
//     watch goroutine waited to run for most of a tick) and the ticker's
//     next fire came at once, it is most of the reading: a process busy
//     on both of 2 cores reads 5 cores over a 1 ms tick
//     (TestWatchShortTick), as agents of a 100 000-VU run read 4.66 and
//     3.75 (docs/performance.md). The watcher therefore judges no tick
//     shorter than half of Every (minSpan): a reading that comes sooner
//     is dropped and the tick runs on to the next one.

// maxStampSkew is the widest bracket of clock reads around a CPU read
// that stamp takes without trying again: a CPU read takes microseconds,
// a descheduled thread waits for milliseconds. Over a tick of at least
// half the default Every it moves the CPU reading by under 0.02 cores.
const maxStampSkew = time.Millisecond

// stampTries bounds stamp's tries: a thread descheduled once is seldom
// descheduled again within microseconds.
const stampTries = 3

// stamp reads the wall clock and the process's CPU time together: now,
// then cpu, then now again, always in that order, as many times as it
// takes (up to stampTries) for the two clock reads to lie within
// maxStampSkew of each other. It returns the instant midway between the
// narrowest bracket's clock reads and that bracket's CPU reading, so the
// instant is within half a bracket of the CPU read. cpu may read more
// than the process's CPU time (readCPU: the machine's counters too), so
// that all it reads falls in one bracket and a tick's readings span the
// same time.
func stamp[T any](now func() time.Time, cpu func() T) (time.Time, T) {
	var (
		at    time.Time
		used  T
		width time.Duration = -1
	)
	for range stampTries {
		t0 := now()
		c := cpu()
		t1 := now()
		if w := t1.Sub(t0); width < 0 || w < width {
			at, used, width = t0.Add(w/2), c, w
		}
		if width <= maxStampSkew {
			break
		}
	}
	return at, used
}

// minSpan is the shortest tick the watcher judges (see above).
func (w *watcher) minSpan() time.Duration { return w.cfg.Every / 2 }

// cpuReading is what a watch reads inside stamp's bracket.
type cpuReading struct {
	cpu     time.Duration // the process's CPU time so far; < 0 unknown
	machine machineReading
}

// readCPU reads the process's CPU time and, for a colocated process's cpu
// rule, the machine's counters right after it.
func (w *watcher) readCPU() cpuReading {
	return cpuReading{cpu: w.cpu(), machine: w.readMachine()}
}
