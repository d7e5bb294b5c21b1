package script

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

func TestParseGCTurn(t *testing.T) {
	for _, c := range []struct {
		in   string
		want GCTurn
		bad  bool
	}{
		{"", GCTurn{}, false},
		{"off", GCTurn{}, false},
		{"0/7", GCTurn{0, 7}, false},
		{"6/7", GCTurn{6, 7}, false},
		{"0/1", GCTurn{0, 1}, false},
		{"7/7", GCTurn{}, true},
		{"-1/7", GCTurn{}, true},
		{"1/0", GCTurn{}, true},
		{"3", GCTurn{}, true},
		{"a/b", GCTurn{}, true},
		{"1/7/2", GCTurn{}, true},
		{"on", GCTurn{}, true},
	} {
		got, err := ParseGCTurn(c.in)
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), GCTurnEnv) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseGCTurn(%q) = %v, %v; want one line naming %s", c.in, got, err, GCTurnEnv)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseGCTurn(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if (GCTurn{0, 1}).On() || (GCTurn{}).On() || !(GCTurn{0, 2}).On() {
		t.Error("On: a turn needs two agents or more")
	}
	if s := (GCTurn{3, 7}).String(); s != "3/7" {
		t.Errorf("String = %q, want 3/7", s)
	}
}

// epoch is a Unix time that starts every rotation the tests use (N up to
// 7, windows of 2 s: a multiple of 14 s, 10 s, 4 s).
var epoch = time.Unix(140*1_000_000, 0)

// Agent I's turn is [I*W, I*W+W/2) of each rotation of N windows of W on
// the Unix clock: the first half of its window, each agent's apart.
func TestGCTurnInTurn(t *testing.T) {
	w := gcTurnWindow
	for _, c := range []struct {
		turn GCTurn
		at   time.Duration // past a rotation's start
		want bool
	}{
		{GCTurn{3, 7}, 3 * w, true},
		{GCTurn{3, 7}, 3*w + w/2 - time.Nanosecond, true},
		{GCTurn{3, 7}, 3*w + w/2, false},
		{GCTurn{3, 7}, 3*w - time.Nanosecond, false},
		{GCTurn{3, 7}, 7*w + 3*w, true}, // the next rotation
		{GCTurn{0, 7}, 0, true},
		{GCTurn{0, 7}, 7 * w, true},
		{GCTurn{6, 7}, 6*w + w/4, true},
		{GCTurn{1, 2}, w, true},
		{GCTurn{1, 2}, 0, false},
		{GCTurn{0, 1}, 0, false}, // no rotation: never
	} {
		if got := c.turn.inTurn(epoch.Add(c.at)); got != c.want {
			t.Errorf("turn %v at +%v: inTurn %v, want %v", c.turn, c.at, got, c.want)
		}
	}
	// Every instant is in at most one agent's turn.
	for at := time.Duration(0); at < 14*w; at += 100 * time.Millisecond {
		n := 0
		for i := range 7 {
			if (GCTurn{i, 7}).inTurn(epoch.Add(at)) {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("+%v is %d agents' turn", at, n)
		}
	}
}

// MB is a runway unit for the fake readings.
const MB = 1 << 20

// due follows the runway from the last cycle's end (the first reading
// of a new cycle count) and runs a cycle in the turn's first half only
// with the GC not held, the heap between the floor and the runtime's
// minimum trigger, and at its pace past that trigger before the next
// turn's first half ends.
func TestGCTurnDue(t *testing.T) {
	turn := GCTurn{2, 7}
	start := epoch.Add(2 * gcTurnWindow) // turn 2's start
	read := func(cycles, allocs uint64) heapReading {
		return heapReading{cycles: cycles, allocs: allocs, live: 100 * MB, goal: 200 * MB}
	}
	// A cycle ended 20 s before the turn: the runway (100 MB) starts then.
	var s turnState
	if turn.due(start.Add(-20*time.Second), read(5, 1000*MB), &s, true) {
		t.Fatal("due at the runway's start")
	}
	// 20 s later, 44 MB used (0.44): at 2.2 MB/s the heap is past 0.7 in
	// 15 s, by the next turn's first half (14 s + 1 s): the last turn
	// before it.
	if !turn.due(start, read(5, 1044*MB), &s, true) {
		t.Fatal("0.44 of the runway at 2.2 MB/s: not due in the last turn before 0.7")
	}
	for _, c := range []struct {
		what    string
		at      time.Time
		took    time.Duration // since the runway's start
		allocs  uint64
		allowed bool
	}{
		{"held", start, 20 * time.Second, 1044 * MB, false},
		{"the turn's second half", start.Add(gcTurnWindow / 2), 20 * time.Second, 1044 * MB, true},
		{"another agent's turn", start.Add(gcTurnWindow), 20 * time.Second, 1044 * MB, true},
		// 20 s for 30 MB: at 1.5 MB/s 0.525 by the next turn, not the last.
		{"a turn to spare", start, 20 * time.Second, 1030 * MB, true},
		// 2 s for 24 MB: past 0.70 at that pace, but below the floor.
		{"below the floor", start, 2 * time.Second, 1024 * MB, true},
		{"past the runtime's minimum trigger", start, 20 * time.Second, 1071 * MB, true},
	} {
		s := turnState{seen: true, cycles: 5, base: 1000 * MB, since: c.at.Add(-c.took)}
		if turn.due(c.at, read(5, c.allocs), &s, c.allowed) {
			t.Errorf("%s: due", c.what)
		}
	}
	// Just past the floor at that pace: due.
	s = turnState{seen: true, cycles: 5, base: 1000 * MB, since: start.Add(-2 * time.Second)}
	if !turn.due(start, read(5, 1025*MB), &s, true) {
		t.Error("0.25 of the runway in 2 s: not due")
	}
	// A new cycle count starts a new runway at that reading, whatever the
	// heap had used before it.
	s = turnState{seen: true, cycles: 5, base: 1000 * MB, since: start.Add(-20 * time.Second)}
	if turn.due(start, read(6, 1060*MB), &s, true) || s.base != 1060*MB || !s.since.Equal(start) {
		t.Fatalf("a new cycle: due, or runway not restarted: %+v", s)
	}
	// No runway known (the goal at or below the live heap): never due.
	s = turnState{seen: true, cycles: 5, base: 1000 * MB, since: start.Add(-20 * time.Second)}
	if turn.due(start, heapReading{cycles: 5, allocs: 1050 * MB, live: 100 * MB, goal: 100 * MB}, &s, true) {
		t.Fatal("no runway: due")
	}
}

// simAgent is one agent of the rotation simulation: a heap that uses its
// runway in full in fill, checked every gcTurnCheck at its own phase, a
// cycle of cycle's wall time in its turn, the runtime's own at 0.95; its
// turns read the one machine all the agents share.
type simAgent struct {
	turn    GCTurn
	fill    time.Duration
	offset  time.Duration
	cycles  uint64
	allocs  float64 // MB
	start   float64 // allocs at the last cycle's start
	busy    time.Time
	run     *turnRun
	forced  []time.Time
	natural int
}

// Seven agents whose natural periods (the runtime's trigger at 0.95 of
// the runway) span 30-90 s, each run of 5 minutes on a fake clock begun
// at each quarter second of a rotation (so that each agent meets its
// turns at every phase of its first runway): every cycle comes in its agent's turn,
// before the runtime's trigger; no two agents' cycles overlap; and the
// agents run at most 2x the cycles the runtime alone would (the cost of
// the turns: each cycle at 0.70 of the runway less one rotation's growth
// at worst, not at 0.95).
func TestGCTurnsRotation(t *testing.T) {
	const n, runway = 7, 100.0 // MB
	// ms to fill the runway: periods 30-90 s at 0.95 of it
	fills := []time.Duration{31600, 40000, 50000, 60000, 70000, 80000, 95000}
	var ran, alone float64
	for shift := time.Duration(0); shift < n*gcTurnWindow; shift += time.Second / 4 {
		agents := simRotation(t, epoch.Add(shift), n, runway, fills, quietMachine)
		for i, a := range agents {
			if a.natural > 0 {
				t.Errorf("begun +%v: agent %d (fill %v): %d cycle(s) at the runtime's trigger, %d in turn", shift, i, a.fill, a.natural, len(a.forced))
			}
			ran += float64(len(a.forced) + a.natural)
			alone += float64(simFor) / float64(a.fill) / 0.95
			if shift == 0 {
				t.Logf("agent %d: natural period %v, %d cycles in %v (%.1f alone)", i, time.Duration(0.95*float64(a.fill)).Round(time.Second),
					len(a.forced)+a.natural, simFor, float64(simFor)/float64(a.fill)/0.95)
			}
		}
	}
	if ran > 2*alone {
		t.Errorf("%.0f cycles against %.0f at the runtime's trigger: %.2fx", ran, alone, ran/alone)
	}
	t.Logf("%.0f cycles against %.0f at the runtime's trigger: %.2fx", ran, alone, ran/alone)
}

// simFor is how long each rotation simulation runs.
const simFor = 5 * time.Minute

// quietMachine is a machine of 2 cores with room throughout: 0.5 busy.
func quietMachine(time.Duration) float64 { return 0.5 }

// simRotation runs n agents filling their runways (MB) in fills (ms)
// for simFor from begin, each cycle taking half a turn, on a machine of
// 2 cores whose busy cores at each moment since begin are busy, and
// fails t if two agents' cycles overlap.
func simRotation(t *testing.T, begin time.Time, n int, runway float64, fills []time.Duration, busy func(time.Duration) float64) []*simAgent {
	t.Helper()
	cycle := gcTurnWindow / 2
	var m fakeMachine
	agents := make([]*simAgent, n)
	for i := range agents {
		a := &simAgent{turn: GCTurn{i, n}, fill: fills[i] * time.Millisecond,
			offset: time.Duration(i*50) * time.Millisecond} // all at a runway's start, as after settle
		a.run = newTurnRun(a.turn, nil, m.room(2), nil)
		agents[i] = a
	}
	const dt = 50 * time.Millisecond
	end := begin.Add(simFor)
	for now := begin; now.Before(end); now = now.Add(dt) {
		m.run(dt, busy(now.Sub(begin)), 2)
		for _, a := range agents {
			a.allocs += runway * float64(dt) / float64(a.fill)
			if a.allocs-a.start >= 0.95*runway && !now.Before(a.busy) {
				a.natural++ // the runtime's trigger: a cycle now
				a.cycles++
				a.start, a.busy = a.allocs, now.Add(cycle)
			}
			if !now.Before(a.busy) && (now.Sub(begin)-a.offset)%gcTurnCheck == 0 {
				r := heapReading{cycles: a.cycles, allocs: uint64(a.allocs * MB), live: 100 * MB, goal: 100*MB + uint64(runway*MB)}
				a.run.force = func() {
					a.forced = append(a.forced, now)
					a.cycles++
					a.start, a.busy = a.allocs, now.Add(cycle)
				}
				a.run.check(now, r, true)
			}
		}
	}
	var all [][2]time.Time
	for _, a := range agents {
		for _, f := range a.forced {
			all = append(all, [2]time.Time{f, f.Add(cycle)})
		}
	}
	for i, x := range all {
		for _, y := range all[i+1:] {
			if x[0].Before(y[1]) && y[0].Before(x[1]) {
				t.Fatalf("cycles overlap: %v and %v", x[0].Sub(begin), y[0].Sub(begin))
			}
		}
	}
	return agents
}

// Turns are allowed with no hold, and in a hold only at settle's pace:
// never while the GC is off (a bulk being made, its tail) nor once
// another bulk begins.
func TestGCTurnsAllowedOutsideHold(t *testing.T) {
	userGC(t)
	var h gcHold
	if !h.turnsAllowed() {
		t.Fatal("no hold: turns not allowed")
	}
	bound := processMemory() + 512<<20
	h.enterN(bulkVUs, bound, 1)
	if h.turnsAllowed() {
		t.Fatal("a bulk being made: turns allowed")
	}
	for range bulkVUs {
		h.leave()
	}
	if h.turnsAllowed() {
		t.Fatal("the bulk's tail, GC off: turns allowed")
	}
	h.settle()
	if !h.turnsAllowed() {
		t.Fatal("settle's pace: turns not allowed")
	}
	h.enter(bound, 1)
	if h.turnsAllowed() {
		t.Fatal("a VU being made at settle's pace: turns allowed")
	}
	h.leave()
	waitRestored(t, 80, userLimit)
	if !h.turnsAllowed() {
		t.Fatal("restored: turns not allowed")
	}
}

// gcTurnSink keeps the test's garbage from being optimised away.
var gcTurnSink []byte

// A real turn: once the heap has used part of its runway at a pace
// that would take it past the runtime's minimum trigger by the next
// turn, the agent's check runs a cycle in its turn, and the runtime
// counts it as forced.
func TestGCTurnForcesACycle(t *testing.T) {
	if userTunedGC {
		t.Fatal("GOGC or GOMEMLIMIT is set: the turns are off by design; run the tests without them")
	}
	// A hold an earlier test's VUs left ends at a cycle's end.
	testwait.Until(t, testwait.Deadline, "no GC hold", func() bool { runtime.GC(); return initGC.turnsAllowed() })
	ballast := make([]byte, 64<<20) // a live heap: a runway of about as much
	runtime.GC()
	forcedBefore := runtimeMetric("/gc/cycles/forced:gc-cycles")
	forced := make(chan struct{}, 1)
	// An idle machine of 2 cores: the room the turn asks for, whatever
	// else runs beside the test.
	began := time.Now()
	idle := machineRoom{cores: 2, read: func() (uint64, uint64, bool) {
		return 0, 2 * uint64(time.Since(began)/time.Millisecond), true
	}}
	stop := startGCTurns(GCTurn{0, 2}, func() {
		runtime.GC()
		select {
		case forced <- struct{}{}:
		default:
		}
	}, idle, nil)
	defer stop()
	// Use 0.55 of the runway at once, short of the runtime's trigger: at
	// that pace the heap passes 0.70 by the next turn (5 s on) as long as
	// the turn comes within 18 s of the start, and it comes within 8 s
	// (a turn with less than the machine's last second read is missed).
	var m heapMetrics
	r := m.read()
	for want := r.allocs + (r.goal-r.live)*55/100; m.read().allocs < want; {
		gcTurnSink = make([]byte, 64<<10)
	}
	testwait.Receive(t, forced, "a cycle in turn")
	stop()
	if n := runtimeMetric("/gc/cycles/forced:gc-cycles"); n <= forcedBefore {
		t.Fatalf("forced cycles %d, %d before the turn", n, forcedBefore)
	}
	runtime.KeepAlive(ballast)
	// The ballast and garbage go back to the OS: the hold's tests after
	// this one judge GOGC by what the process holds over its live heap.
	gcTurnSink = nil
	debug.FreeOSMemory()
}

// A check reads the heap without allocating.
func TestHeapMetricsReadAllocatesNothing(t *testing.T) {
	var m heapMetrics
	m.read()
	if n := testing.AllocsPerRun(100, func() { _ = m.read() }); n != 0 {
		t.Fatalf("read allocates %v times", n)
	}
}
