package script

import (
	"fmt"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/throttlekit/throttle/internal/phase"
)

// Colocated local agents take turns at their GC cycles.
//
// `throttle run --local-agents N` starts N agent processes on one
// machine, each with one P (cmd/throttle localAgentEnv). With one P,
// Go's idle mark worker fills all of a process's idle time while its
// cycle runs: an agent that uses 0.08 cores uses a whole one for the
// 0.7-2 s of its cycle. The agents' heaps grow alike, so their cycles
// came together: at 100 000 VUs over 7 agents on 2 cores, six of seven
// began their one steady cycle within 9 s of each other and starved
// every process for seconds (p99 latency 270 ms in that window, 4-6 ms
// otherwise; docs/performance.md, "GC turns for colocated agents").
//
// So agent I of N may start a cycle early in its turn alone: a rotating
// schedule of N windows of gcTurnWindow on the machine's clock (Unix
// time mod N*gcTurnWindow in [I*gcTurnWindow, (I+1)*gcTurnWindow)),
// shared by the agents with no messages. A cycle begins only in the first
// half of a turn, so that it ends inside it. The runtime's own trigger
// never comes below 45/64 (0.70) of the runway from the live heap at the
// last cycle's end to the GC's goal (the pacer's minimum trigger), so an
// agent runs runtime.GC in the last of its turns before its heap would
// pass 0.70: in a turn, when the heap's pace since the last cycle (the
// runway used over the time it took) would take it past 0.70 before the
// next turn's first half ends, N*gcTurnWindow+gcTurnWindow/2 later. Not
// below gcTurnFloor of the runway (a cycle that early would mark the same
// live heap for little garbage), and not past 0.70: the runtime may be
// marking already, and runtime.GC would then wait for that cycle and run
// another at once; the cycle is the runtime's then.
//
// A fixed fraction instead (a cycle in the first turn past F of the
// runway) has to choose F for the fastest agent: with 7 agents a turn
// comes every 14 s, so an agent whose natural period is 30 s (0.44 of
// its runway between turns) needs F below 0.26, and one whose period is
// 90 s then cycles at 0.26-0.42 of its runway, 2.5-3.5x as often as it
// would. Cycling at the last turn, each runs at 0.70 less one turn's
// growth at worst. The price is still more cycles, each marking the same
// live heap, and a turn every 14 s quantises them: 7 agents of periods
// 30-90 s, simulated for 5 minutes from every quarter second of a
// rotation (TestGCTurnsRotation), ran 1.84x the cycles of the runtime's
// trigger at 0.95 of the runway: 2.1-2.3x for the agents of 30 and 38 s
// (a cycle every turn), 1.5-1.7x for those of 48-90 s.
//
// Never while the GC is off (a bulk of VUs being made or its tail) or
// while settle's cycle runs: the hold's pace is the one that matters
// then (gcHold.turnsAllowed). The settled pace after it (GOGC's goal the
// live heap plus all the process holds) is a goal like any other: a
// cycle in turn ends it as the runtime's own would. Never when the user
// set GOGC or GOMEMLIMIT (the GC is theirs), and never for a remote
// agent: only a controller's local agents get a turn (GCTurnEnv), and
// not when the user tells the controller THROTTLE_GC_TURN=off.
// Never while the machine has no core to spare (gcturn_room.go): on a
// full one (100 000 VUs starting over 20 s on 2 cores) the forced cycles
// stretched to 5-8 s with seconds of assists and the run fell behind, so
// session 15 made turns opt-in; they ask for room since, and are the
// default again after 100 000-VU runs where agents without turns marked
// ticks saturated as their own cycles came together and agents with them
// did not (docs/performance.md, "100 000 VUs after session 16's work").
//
// With THROTTLE_WATCH_TRACE set, each agent writes what its turns did to
// gcturn-PID.csv beside the watch's traces (gcturn_log.go).
type GCTurn struct {
	I, N int // this agent's turn (0-based) of the N sharing the machine
}

// GCTurnEnv carries a local agent's turn, "I/N", from its controller;
// "off" or unset: none.
const GCTurnEnv = "THROTTLE_GC_TURN"

const (
	// gcTurnWindow is one agent's turn: longer than an agent's cycle
	// started in its first half (0.3-1.7 s of wall time measured).
	gcTurnWindow = 2 * time.Second
	// gcTurnFloor is the least of its runway an agent's heap has used
	// for a cycle in turn: one rotation's growth (14 s for 7 agents)
	// short of 0.70 for the fastest agent expected (a 30 s period: 0.44
	// of its runway a rotation, so 0.26), which then still gets a turn
	// between the floor and 0.70. Lower, the VUs' first iterations (their
	// connects, a burst of allocation) paced a cycle at 0.22 of the
	// runway 5 s after settle's (42 000 VUs over 7 agents, gctrace).
	gcTurnFloor = 0.25
	// gcTurnBelow is the runtime's minimum trigger (45/64 of the
	// runway): below it no cycle of the runtime's own runs yet.
	gcTurnBelow = 45.0 / 64
	// gcTurnCheck is how often an agent reads its heap.
	gcTurnCheck = 200 * time.Millisecond
)

// On says the turn takes part in a rotation (two agents or more).
func (t GCTurn) On() bool { return t.N > 1 }

// String is the turn as GCTurnEnv carries it.
func (t GCTurn) String() string {
	if !t.On() {
		return "off"
	}
	return strconv.Itoa(t.I) + "/" + strconv.Itoa(t.N)
}

// ParseGCTurn reads a turn as GCTurnEnv carries it: "I/N" with
// 0 <= I < N, or "" or "off" for none.
func ParseGCTurn(s string) (GCTurn, error) {
	if s == "" || s == "off" {
		return GCTurn{}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return GCTurn{}, fmt.Errorf("%s=%q: want I/N with 0 <= I < N (agent I of N local agents), or off", GCTurnEnv, s)
	}
	return GCTurn{I: i, N: n}, nil
}

// GCTurnFromEnv is this process's turn (GCTurnEnv); a bad value is an
// error naming it.
func GCTurnFromEnv() (GCTurn, error) { return ParseGCTurn(os.Getenv(GCTurnEnv)) }

// inTurn says now is in the first half of the turn, when a cycle begun
// ends inside it.
func (t GCTurn) inTurn(now time.Time) bool {
	return t.On() && t.sinceTurn(now) < gcTurnWindow/2
}

// nearTurn says now is in the first half of the turn or in the span the
// machine is judged over before it (roomChecks checks).
func (t GCTurn) nearTurn(now time.Time) bool {
	if !t.On() {
		return false
	}
	at := t.sinceTurn(now)
	return at < gcTurnWindow/2 || at >= time.Duration(t.N)*gcTurnWindow-roomChecks*gcTurnCheck
}

// sinceTurn is how long ago the turn last began, in [0, N*gcTurnWindow).
func (t GCTurn) sinceTurn(now time.Time) time.Duration {
	rot := int64(t.N) * int64(gcTurnWindow)
	at := (now.UnixNano() - int64(t.I)*int64(gcTurnWindow)) % rot
	if at < 0 {
		at += rot
	}
	return time.Duration(at)
}

// rotation numbers the rotation now is in, counted from the turn's
// start: one turn each.
func (t GCTurn) rotation(now time.Time) int64 {
	return (now.UnixNano() - int64(t.I)*int64(gcTurnWindow) - int64(t.sinceTurn(now))) / (int64(t.N) * int64(gcTurnWindow))
}

// heapReading is one check's reading of the runtime (runtime/metrics).
type heapReading struct {
	cycles uint64 // GC cycles completed
	allocs uint64 // bytes allocated to the heap since the process began
	live   uint64 // the heap the last cycle found live
	goal   uint64 // the heap's goal for the next cycle
}

// turnState follows the runway between checks. Its start is the heap's
// allocations when a check first saw the last cycle's end: a check's
// period late at most, which understates the heap by that period's
// allocations, and its pace not at all.
type turnState struct {
	seen   bool
	cycles uint64    // the cycles completed at the last check
	base   uint64    // allocs when they were first seen
	since  time.Time // when
}

// used is the fraction of the runway (live heap to goal) the heap has
// used by reading r, taken at now.
func (s *turnState) used(now time.Time, r heapReading) float64 {
	if !s.seen || r.cycles != s.cycles {
		s.seen, s.cycles, s.base, s.since = true, r.cycles, r.allocs, now
	}
	if r.goal <= r.live {
		return 0 // no runway known: nothing to judge by
	}
	return float64(r.allocs-s.base) / float64(r.goal-r.live)
}

// due says a check at now with reading r runs a cycle: the GC not held
// (allowed), in the first half of the turn, the heap between gcTurnFloor
// and gcTurnBelow of its runway, and at its pace past gcTurnBelow by the
// end of the next turn's first half.
func (t GCTurn) due(now time.Time, r heapReading, s *turnState, allowed bool) bool {
	u := s.used(now, r)
	if !allowed || !t.inTurn(now) || u < gcTurnFloor || u >= gcTurnBelow {
		return false
	}
	took := now.Sub(s.since)
	if took <= 0 {
		return false
	}
	next := time.Duration(t.N)*gcTurnWindow + gcTurnWindow/2
	return u+u*float64(next)/float64(took) >= gcTurnBelow
}

// StartGCTurns has this process take its turn t at the GC until stop
// returns (stop waits for a cycle under way). Nothing runs when t is off
// or the user set GOGC or GOMEMLIMIT, and nothing is forced where the
// machine's room cannot be read (gcturn_room.go).
func StartGCTurns(t GCTurn) (stop func()) {
	if !t.On() || userTunedGC {
		return func() {}
	}
	read, cores, why := phase.MachineCPU()
	return startGCTurns(t, runtime.GC, machineRoom{read: read, cores: float64(cores), off: why}, openTurnLog(t))
}

// startGCTurns checks every gcTurnCheck and runs force when a cycle is
// due and the machine, as room reads it, has room for it, until stop;
// with no reading of the machine it starts no checks. log (nil: none)
// records what the turns did.
func startGCTurns(t GCTurn, force func(), room machineRoom, log *turnLog) (stop func()) {
	r := newTurnRun(t, force, room, log)
	log.start(time.Now(), &r.room)
	if !r.room.known() {
		return func() { log.end(time.Now(), r) }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	// The runway's start is read now: the heap allocated from here on is
	// the turn's to judge.
	r.s.used(time.Now(), r.heap.read())
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(gcTurnCheck)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				// A bulk beginning between this check and the cycle
				// costs that cycle, no more: holding h.mu through it
				// would stall the VUs being made.
				r.check(now, r.heap.read(), initGC.turnsAllowed())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			r.finish()
			log.end(time.Now(), r)
		})
	}
}

// turnRun is one agent's turns as they run: what its checks follow and
// what they did. Its check is called from one goroutine at a time.
type turnRun struct {
	t     GCTurn
	force func()
	heap  heapMetrics
	s     turnState
	room  machineRoom
	log   *turnLog
	// forced counts the cycles run in turn; skipped the turns in which a
	// cycle was due and the machine never had room for it.
	forced, skipped int
	// wanted is the rotation whose turn has found a cycle due and the
	// machine without room (-1: none), wantedAt its first such check;
	// least the fewest busy cores read at those checks (-1: none read),
	// wantedUsed the runway used.
	wanted            int64
	wantedAt          time.Time
	least, wantedUsed float64
	offLogged         bool
}

func newTurnRun(t GCTurn, force func(), room machineRoom, log *turnLog) *turnRun {
	return &turnRun{t: t, force: force, room: room, log: log, wanted: -1}
}

// check is one check at now with heap reading h, the GC not held when
// allowed: the machine read near the turn, a turn that found no room
// counted once it is over, and a due cycle forced when the machine has
// room for it.
func (r *turnRun) check(now time.Time, h heapReading, allowed bool) {
	busy := -1.0
	if r.t.nearTurn(now) {
		busy = r.room.observe(now)
	}
	if r.wanted >= 0 && r.wanted != r.t.rotation(now) {
		r.finish()
	}
	due := r.t.due(now, h, &r.s, allowed)
	if !r.room.known() {
		if !r.offLogged {
			r.offLogged = true
			r.log.off(now, r.room.off)
		}
		return
	}
	if !due {
		return
	}
	if !hasRoom(busy, r.room.cores) {
		if rot := r.t.rotation(now); r.wanted != rot {
			r.wanted, r.wantedAt, r.least = rot, now, -1
		}
		if busy >= 0 && (r.least < 0 || busy < r.least) {
			r.least = busy
		}
		r.wantedUsed = r.s.used(now, h)
		return
	}
	used := r.s.used(now, h)
	start := time.Now()
	r.force()
	r.forced++
	r.wanted = -1
	r.log.forced(now, busy, used, time.Since(start))
}

// finish counts a turn that found no room as skipped (at the next
// turn's start, or at stop), logged at its first due check.
func (r *turnRun) finish() {
	if r.wanted < 0 {
		return
	}
	r.skipped++
	r.wanted = -1
	r.log.skipped(r.wantedAt, r.least, r.wantedUsed)
}

// heapMetrics reads a heapReading without allocating: the samples are
// made once.
type heapMetrics struct {
	s []rtmetrics.Sample
}

func (m *heapMetrics) read() heapReading {
	if m.s == nil {
		m.s = []rtmetrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"},
			{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}}
	}
	rtmetrics.Read(m.s)
	var v [4]uint64
	for i, s := range m.s {
		if s.Value.Kind() != rtmetrics.KindUint64 {
			return heapReading{} // unknown: no runway, never due
		}
		v[i] = s.Value.Uint64()
	}
	return heapReading{cycles: v[0], allocs: v[1], live: v[2], goal: v[3]}
}
