package engine

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// Meter is a phase's cumulative attempt plane: what runners started, how
// each resolved attempt ended (by class) and how long it took, iterations
// by outcome, dropped and aborted work, and the generator's own verdict on
// whether it is the bottleneck. Runners record into it; the governor reads
// it as a governor.LoadCounters; Counts and Snapshot read it for the live
// view and the report.
//
// Every counter only grows. It is safe for concurrent use and lock-free;
// each counter sits on its own cache line so workers on different cores do
// not contend on one. Make it with NewMeter (the zero value is not ready:
// use the constructor so future fields get their start values).
type Meter struct {
	// An attempt is failed exactly when its class is not ClassOK, so the
	// classes are also the governor's ok and failed counts.
	classes    [NumClasses]padded
	started    padded
	iterOK     padded
	iterFailed padded
	dropped    padded
	missed     padded // arrivals the schedule asked for and the generator never made
	aborted    padded
	unreach    padded // failed attempts that found no server (governor.Load.Unreachable)
	latency    padded // summed Elapsed of resolved attempts, nanoseconds
	lagSum     padded // summed schedule lag of first attempts, nanoseconds
	lagged     padded // how many lags lagSum holds
	rxSum      padded // summed read delay of stamped answers, nanoseconds
	rxN        padded // how many read delays rxSum holds
	rxMax      padded // the longest read delay, nanoseconds
	inflight   paddedInt

	saturated atomic.Bool   // the generator's verdict of the last watch tick
	satRate   atomic.Uint64 // float64 bits: attempts/s over the saturated ticks, 0 for none
}

type padded struct {
	atomic.Uint64
	_ [56]byte
}

type paddedInt struct {
	atomic.Int64
	_ [56]byte
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter { return &Meter{} }

var _ governor.LoadCounters = (*Meter)(nil)

// Attempts implements governor.Counters: the resolved attempts so far.
func (m *Meter) Attempts() (ok, failed uint64) {
	var c [NumClasses]uint64
	m.loadClasses(&c)
	return okFailed(&c)
}

// Load implements governor.LoadCounters. A runner counts an attempt
// started before it resolves it, and the governor calls Attempts before
// Load, so the Started it reads is never below the ok + failed it just read
// (in flight = Started − resolved − aborted is never negative).
func (m *Meter) Load() governor.Load {
	return governor.Load{
		Started:            m.started.Load(),
		Dropped:            m.dropped.Load(),
		Latency:            time.Duration(m.latency.Load()),
		Unreachable:        m.unreach.Load(),
		GeneratorSaturated: m.saturated.Load(),
	}
}

// Drop counts an arrival the schedule produced that no worker could start.
func (m *Meter) Drop() { m.dropped.Add(1) }

// Miss counts n arrivals the schedule asked for that the generator never
// made (phase.Counters).
func (m *Meter) Miss(n uint64) { m.missed.Add(n) }

// EndIteration counts an iteration by its outcome (an aborted one is not
// counted: its attempt already was).
func (m *Meter) EndIteration(o Outcome) {
	switch o {
	case IterationOK:
		m.iterOK.Add(1)
	case IterationFailed:
		m.iterFailed.Add(1)
	}
}

// InFlight is how many iterations are running now.
func (m *Meter) InFlight() int64 { return m.inflight.Load() }

// Saturated reports the generator's verdict of its last watch tick, and
// the attempt rate it reached over every saturated tick so far (0 when no
// tick was saturated).
func (m *Meter) Saturated() (now bool, rate float64) {
	return m.saturated.Load(), math.Float64frombits(m.satRate.Load())
}

// SetSaturated records a watch tick's verdict (phase.Counters).
func (m *Meter) SetSaturated(now bool, rate float64) {
	m.saturated.Store(now)
	m.satRate.Store(math.Float64bits(rate))
}

// resolve counts one resolved attempt of class c that took elapsed.
func (m *Meter) resolve(c Class, elapsed time.Duration) {
	m.latency.Add(uint64(max(elapsed, 0)))
	m.classes[c].Add(1)
}

// Lag counts one arrival's schedule lag: how late its worker began it
// after its intended start (phase.Counters).
func (m *Meter) Lag(d time.Duration) {
	m.lagSum.Add(uint64(max(d, 0)))
	m.lagged.Add(1)
}

// LagTotal is the summed schedule lag so far and how many arrivals it
// holds (phase.Counters).
func (m *Meter) LagTotal() (sum time.Duration, n uint64) {
	return time.Duration(m.lagSum.Load()), m.lagged.Load()
}

// readDelay counts one answer's read delay: how long its first byte
// waited in the kernel, after it arrived, for the generator to read it.
func (m *Meter) readDelay(d time.Duration) {
	v := uint64(max(d, 0))
	m.rxSum.Add(v)
	m.rxN.Add(1)
	for {
		old := m.rxMax.Load()
		if v <= old || m.rxMax.CompareAndSwap(old, v) {
			return
		}
	}
}

// ReadDelay is the summed read delay so far, how many answers it holds,
// and the longest one: the time answers waited, after the kernel had them,
// for the generator to read them. Only answers read with the kernel's
// receive stamps count (the raw and event-loop transports on Linux: see
// RxStampEnv); n is 0 where there are none. On a generator with CPU to
// spare a read delay is a few µs; one of milliseconds is the generator's
// own queueing, which the timings no longer include.
func (m *Meter) ReadDelay() (sum time.Duration, n uint64, longest time.Duration) {
	return time.Duration(m.rxSum.Load()), m.rxN.Load(), time.Duration(m.rxMax.Load())
}

// loadClasses reads the class counters, the failure classes first: a
// concurrent attempt then can only make ok look newer than failed, never
// count one attempt twice.
func (m *Meter) loadClasses(c *[NumClasses]uint64) {
	for i := range c {
		if Class(i) != ClassOK {
			c[i] = m.classes[i].Load()
		}
	}
	c[ClassOK] = m.classes[ClassOK].Load()
}

// okFailed splits class counts into ok and failed attempts.
func okFailed(c *[NumClasses]uint64) (ok, failed uint64) {
	for i, n := range c {
		if Class(i) == ClassOK {
			ok = n
		} else {
			failed += n
		}
	}
	return ok, failed
}

// Counts reads the cumulative counters.
func (m *Meter) Counts() Counts {
	c := Counts{
		IterOK:     m.iterOK.Load(),
		IterFailed: m.iterFailed.Load(),
		Dropped:    m.dropped.Load(),
		Missed:     m.missed.Load(),
		Aborted:    m.aborted.Load(),
	}
	m.loadClasses(&c.Classes)
	c.OK, c.Failed = okFailed(&c.Classes)
	c.Started = m.started.Load()
	c.ReadDelay.Sum, c.ReadDelay.N, c.ReadDelay.Max = m.ReadDelay()
	return c
}

// Record counts one attempt that a protocol other than the runner's HTTP
// made itself (a WebSocket handshake or message, a gRPC call): started,
// then resolved as class c after elapsed, so the governor sees it as it
// sees a request.
func (m *Meter) Record(c Class, elapsed time.Duration) {
	m.started.Add(1)
	m.resolve(c, elapsed)
}
