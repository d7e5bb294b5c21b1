package script

import (
	"time"

	"github.com/throttlekit/throttle/internal/phase"
)

// A turn asks the machine for room before it forces a cycle.
//
// A cycle forced on a one-P agent fills that agent's idle time, up to a
// whole core, for as long as it marks (gcturn.go). On a machine with a
// core to spare that core is idle anyway: the cycle marks alone and ends
// inside its turn (0.3-0.5 s at 100 000 VUs on 2 cores). On a full one it
// takes the core from the other agents and nginx, and is starved itself:
// in the first period of a 100 000-VU run spread over 20 s (the machine
// at 1.98 of its 2 cores) every agent forced its cycle early, each took
// 4.7-7.9 s with seconds of assists, they overlapped, and the run fell
// behind (docs/performance.md, "100 000 VUs after session 15's work").
//
// So a turn forces its cycle only when the machine, over the last second
// of checks (roomChecks readings of /proc/stat's aggregate line, the cpu
// rule's reading: phase.MachineCPU), had at least one core idle — the
// core the marking agent will fill — and was below roomMaxShare (0.9) of
// its cores: busy <= cores-1 and busy < 0.9*cores. On 2 cores that is at
// most 1.0 core busy; the 0.9 binds only above 10 cores. The evidence
// (watch traces of two 100 000-VU runs, 1 s spans of the machine's busy
// cores, docs/performance.md "GC turns that ask for room"): the steady
// state, where turns belong, read a median of 0.83-0.88 of 2 cores (p90
// 0.95-1.03; 6-14 % of its spans above 1.0), the first period's ramp,
// where they hurt, 1.14-1.20 (p90 1.26-1.32), and the failed run 1.98.
// A turn checks its first half five times, so one busy span does not
// cost it its cycle.
//
// A turn with no room forces nothing and leaves the cycle to the
// runtime's own trigger (past 0.70 of the runway), as with no turns: at
// 100 000 VUs the cycles forced on a full machine cost more than the
// overlap they avoided (the run that turned turns off); at 30 000, beside two busy
// loops, skipping left the seven agents' own cycles overlapping for
// 1.7 s, where forcing had cost 0.2-1.9 s cycles one at a time (the
// docs' section): a skipped turn is no better than no turns, and no
// worse.
//
// Where the machine cannot be read (not Linux, /proc/stat unreadable, an
// affinity mask, cpuset or cgroup quota narrowing the cores, where the
// cpu rule falls back to its share too) or a reading fails, turns force
// nothing at all: "turns as before" would bring back exactly the forced
// cycles on a full machine that turned them off by default, while "no
// turns" is what every run without THROTTLE_GC_TURN does.
//
// The machine is read only from roomChecks checks before its turn's
// start until its first half ends (1.5 s of a rotation of 2N s): the
// watch reads the same file every tick, and a turn needs only its last
// second.

const (
	// roomChecks is the span the machine is judged over: its readings
	// gcTurnCheck apart, 1 s.
	roomChecks = 5
	// roomStale is the oldest the span's first reading may be: a check
	// late under load stretches the span, a reading from an earlier
	// rotation is not of it.
	roomStale = 2 * time.Second
	// roomMaxShare is the busy share of its cores at which the machine
	// has no room whatever its size: the cpu rule's default bound.
	roomMaxShare = phase.DefaultSaturationCPU
)

// hasRoom says a machine of cores cores, busy cores busy over the last
// span (< 0: unknown), has room for a forced cycle: a whole core idle and
// below roomMaxShare of its cores.
func hasRoom(busy, cores float64) bool {
	return busy >= 0 && cores-busy >= 1 && busy < roomMaxShare*cores
}

// machineSample is one reading of the machine's counters and when.
type machineSample struct {
	busy, total uint64
	at          time.Time
}

// machineRoom follows the machine's busy cores over the last roomChecks
// readings, allocating nothing. read nil: the machine is not known, and
// off says why; a failed read turns it off for good.
type machineRoom struct {
	read  func() (busy, total uint64, ok bool)
	cores float64
	off   string
	ring  [roomChecks]machineSample
	n     int // readings taken; ring[n%roomChecks] is the span's start
}

// known says the machine can be judged.
func (m *machineRoom) known() bool { return m.read != nil && m.off == "" }

// observe reads the machine at now and returns its busy cores since the
// reading roomChecks before, or -1 when there is no such reading within
// roomStale (or the read failed).
func (m *machineRoom) observe(now time.Time) float64 {
	if !m.known() {
		return -1
	}
	b, t, ok := m.read()
	if !ok {
		m.off = "a /proc/stat reading failed"
		return -1
	}
	i := m.n % roomChecks
	first := m.ring[i]
	m.ring[i] = machineSample{busy: b, total: t, at: now}
	m.n++
	if m.n <= roomChecks || now.Sub(first.at) > roomStale || t <= first.total || b < first.busy {
		return -1
	}
	busy := min(b-first.busy, t-first.total)
	return float64(busy) / float64(t-first.total) * m.cores
}
