package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/phase"
)

// fakeMachine is a machine's /proc/stat counters on a fake clock: 100
// clock ticks a second a core, as Linux counts them.
type fakeMachine struct {
	busy, total float64
	fail        bool
}

// run advances the counters by d with busy of cores cores busy.
func (m *fakeMachine) run(d time.Duration, busy, cores float64) {
	m.total += 100 * cores * d.Seconds()
	m.busy += 100 * busy * d.Seconds()
}

func (m *fakeMachine) read() (uint64, uint64, bool) {
	return uint64(m.busy), uint64(m.total), !m.fail
}

// room is the room check of a machine of cores cores reading m.
func (m *fakeMachine) room(cores float64) machineRoom {
	return machineRoom{read: m.read, cores: cores}
}

// turnFixture is agent 2 of 7 whose heap, read at its turn's start, has
// used 0.44 of its runway in 20 s: due in that turn (TestGCTurnDue).
type turnFixture struct {
	run    *turnRun
	m      *fakeMachine
	start  time.Time // the turn's start
	forced int       // calls of force
}

func newTurnFixture(t *testing.T, log *turnLog) *turnFixture {
	t.Helper()
	f := &turnFixture{m: &fakeMachine{}, start: epoch.Add(2 * gcTurnWindow)}
	f.run = newTurnRun(GCTurn{2, 7}, func() { f.forced++ }, f.m.room(2), log)
	f.run.s = turnState{seen: true, cycles: 5, base: 1000 * MB, since: f.start.Add(-20 * time.Second)}
	return f
}

// heap is the fixture's heap reading: due in the turn, and a new runway
// from each forced cycle on.
func (f *turnFixture) heap() heapReading {
	return heapReading{cycles: 5 + uint64(f.forced), allocs: 1044 * MB, live: 100 * MB, goal: 200 * MB}
}

// checks runs the agent's checks from at, every gcTurnCheck, until to,
// with the machine busy cores busy of 2 meanwhile.
func (f *turnFixture) checks(from, to time.Duration, busy float64) {
	for at := from; at < to; at += gcTurnCheck {
		f.m.run(gcTurnCheck, busy, 2)
		f.run.check(f.start.Add(at), f.heap(), true)
	}
}

// A due cycle is forced in its turn when the machine had a core idle
// over the last second, and not when it had less: 1.0 of 2 cores busy
// forces, 1.1 or a full machine does not, and such a turn counts as
// skipped once it is over (one skip for its five due checks).
func TestGCTurnAsksForRoom(t *testing.T) {
	for _, c := range []struct {
		busy   float64 // of 2 cores, before and in the turn
		forced bool
	}{
		{0.5, true},
		{1.0, true},
		{1.1, false},
		{1.8, false},
		{1.98, false},
	} {
		f := newTurnFixture(t, nil)
		f.checks(-2*time.Second, gcTurnWindow, c.busy) // through the turn
		if got := f.forced == 1; got != c.forced || f.run.forced != f.forced {
			t.Errorf("machine at %.2f of 2 cores: %d forced (counted %d), want forced %v", c.busy, f.forced, f.run.forced, c.forced)
		}
		f.checks(14*time.Second, 14*time.Second+gcTurnCheck, c.busy) // the next rotation
		if want := map[bool]int{true: 0, false: 1}[c.forced]; f.run.skipped != want {
			t.Errorf("machine at %.2f of 2 cores: %d turns skipped, want %d", c.busy, f.run.skipped, want)
		}
	}
}

// Room that comes within the turn's first half is taken: a full machine
// until the turn's start, then a quiet one; the span of the last second
// has room by the last check of the first half.
func TestGCTurnRoomWithinTheTurn(t *testing.T) {
	f := newTurnFixture(t, nil)
	f.checks(-2*time.Second, 0, 1.95)
	f.checks(0, gcTurnWindow/2, 0.3)
	if f.forced != 1 || f.run.skipped != 0 {
		t.Fatalf("%d forced, %d skipped: want the cycle forced once the last second had room", f.forced, f.run.skipped)
	}
}

// A turn with no full second of readings before it (the agent began
// inside it) does not know the machine's room, so it forces nothing.
func TestGCTurnNeedsASpan(t *testing.T) {
	f := newTurnFixture(t, nil)
	f.checks(0, 3*gcTurnCheck, 0.2)
	if f.forced != 0 {
		t.Fatalf("forced with %d readings of the machine", 3)
	}
}

// Where the machine cannot be read, or a reading fails, turns force
// nothing: the runtime's trigger is left the cycle, as with no turns.
func TestGCTurnFallback(t *testing.T) {
	f := newTurnFixture(t, nil)
	f.run.room = machineRoom{cores: 2, off: "no /proc/stat on this system"}
	f.checks(-2*time.Second, gcTurnWindow, 0.2)
	if f.forced != 0 {
		t.Fatal("forced with no machine reading")
	}
	// A failed read before the turn: off for good, though reads work again.
	f = newTurnFixture(t, nil)
	f.checks(-2*time.Second, -gcTurnCheck, 0.2)
	f.m.fail = true
	f.checks(-gcTurnCheck, 0, 0.2)
	f.m.fail = false
	f.checks(0, gcTurnWindow, 0.2)
	if f.forced != 0 || f.run.room.known() || f.run.room.off == "" {
		t.Fatalf("after a failed read: %d forced, room %+v", f.forced, f.run.room)
	}
	// startGCTurns with no machine starts no checks and forces nothing.
	stop := startGCTurns(GCTurn{0, 2}, func() { t.Error("forced with no machine") }, machineRoom{cores: 2, off: "none"}, nil)
	stop()
}

// The machine's reading, the check around it and the real reader
// allocate nothing.
func TestGCTurnCheckAllocatesNothing(t *testing.T) {
	f := newTurnFixture(t, nil)
	at := -2 * time.Second
	if n := testing.AllocsPerRun(200, func() {
		f.m.run(gcTurnCheck, 0.4, 2)
		f.run.check(f.start.Add(at), f.heap(), true)
		at += gcTurnCheck
	}); n != 0 {
		t.Fatalf("a check allocates %v times", n)
	}
	read, cores, why := phase.MachineCPU()
	if read == nil {
		// A machine the cpu rule cannot read either: the turns' fallback.
		if why == "" || cores < 1 {
			t.Fatalf("no machine reader and no reason (cores %d)", cores)
		}
		return
	}
	room := machineRoom{read: read, cores: float64(cores)}
	now := time.Now()
	if n := testing.AllocsPerRun(50, func() { now = now.Add(gcTurnCheck); room.observe(now) }); n != 0 {
		t.Fatalf("reading /proc/stat allocates %v times", n)
	}
	if room.off != "" {
		t.Fatalf("/proc/stat readings failed: %s", room.off)
	}
}

// The turns' log says what they did, on the watch trace's clock: the
// start, a forced cycle with the room it found, a skipped turn, and the
// totals.
func TestGCTurnLog(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(phase.WatchTraceEnv, dir)
	log := openTurnLog(GCTurn{2, 7})
	if log == nil {
		t.Fatal("no log with the trace directory set")
	}
	f := newTurnFixture(t, log)
	log.start(f.start, &f.run.room)
	f.checks(-2*time.Second, gcTurnWindow, 0.5) // forced
	// The next rotation: the heap due again, the machine full.
	f.run.s = turnState{seen: true, cycles: 5 + uint64(f.forced), base: 1000 * MB, since: f.start.Add(-6 * time.Second)}
	f.checks(13*time.Second, 16*time.Second, 1.9)
	f.run.finish()
	log.end(f.start.Add(16*time.Second), f.run)
	b, err := os.ReadFile(filepath.Join(dir, "gcturn-"+strconv.Itoa(os.Getpid())+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"unix_s,turn,event,machine,cores,runway,cycle_s,note", ",2/7,start,", ",2/7,forced,0.500,2,0.440,", ",2/7,skipped,1.900,2,", ",2/7,end,-1.000,2,-1.000,-1.000,forced 1 skipped 1"}
	if len(lines) != len(want) {
		t.Fatalf("log:\n%s\nwant %d lines", b, len(want))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q: want %q in it", i, lines[i], w)
		}
	}
	// The skipped turn is logged at its first due check (its start), not
	// when it was found over.
	if at := fmt.Sprintf("%.3f,", float64(f.start.Add(14*time.Second).UnixNano())/1e9); !strings.HasPrefix(lines[3], at) {
		t.Errorf("skipped line %q: want it at the turn's start, %s", lines[3], at)
	}
}

// With no trace directory there is no log, and a nil log records
// nothing.
func TestGCTurnNoLog(t *testing.T) {
	t.Setenv(phase.WatchTraceEnv, "")
	if l := openTurnLog(GCTurn{0, 2}); l != nil {
		t.Fatal("a log with no trace directory")
	}
	var l *turnLog
	l.forced(epoch, 0.5, 0.4, time.Second)
	l.end(epoch, &turnRun{})
}

// Seven agents on a full machine for their first minute, then a quiet
// one: no cycle is forced while it is full (each agent's cycles there
// are the runtime's own), and the turns take them over once there is
// room, with no two overlapping.
func TestGCTurnsRotationFullMachine(t *testing.T) {
	const n, runway = 7, 100.0
	fills := []time.Duration{31600, 40000, 50000, 60000, 70000, 80000, 95000}
	full := func(d time.Duration) float64 {
		if d < time.Minute {
			return 1.95
		}
		return 0.6
	}
	for shift := time.Duration(0); shift < n*gcTurnWindow; shift += time.Second {
		begin := epoch.Add(shift)
		agents := simRotation(t, begin, n, runway, fills, full)
		natural, after := 0, 0
		for i, a := range agents {
			for _, at := range a.forced {
				if at.Sub(begin) < time.Minute {
					t.Fatalf("begun +%v: agent %d forced a cycle at %v, on a full machine", shift, i, at.Sub(begin))
				}
				after++
			}
			natural += a.natural
		}
		if natural == 0 || after == 0 {
			t.Fatalf("begun +%v: %d cycles at the runtime's trigger, %d forced after the first minute", shift, natural, after)
		}
	}
}
