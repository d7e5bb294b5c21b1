package phase

import (
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// The generator watches itself: a load generator that runs out of CPU, or
// whose scheduler falls behind, produces figures that are its own and not
// the target's (dropped arrivals, inflated latency, an achieved rate below
// the offer). A governor that took them for the target's would back off
// from a healthy server. So every WatchConfig.Every a phase compares
// its readings over the tick with thresholds, the first two in both modes:
//
//   - cpu: the process's own CPU time (getrusage) over the tick, in cores,
//     at or above WatchConfig.CPU × the cores it may use (usableCores: its
//     GOMAXPROCS, or with WatchConfig.Colocated processes sharing the
//     machine, as --local-agents N has, its share of the machine's cores
//     if that is less). A colocated process bounded by its share, not by
//     its GOMAXPROCS, is marked only when the machine had no room left
//     as well: the machine's busy CPU over the same tick (Linux's
//     /proc/stat, every core, other processes included) at or above
//     WatchConfig.CPU × its cores. The share assumes every other process
//     uses its own; when they do not (seven agents' GC cycles at
//     different moments), a process above its share starves nobody.
//     Without a machine reading (not Linux, an error, a cpuset or cgroup
//     quota narrowing the cores /proc/stat sums) the share alone judges,
//     as for a lone process (watch_machine.go). The clock, the CPU time
//     and the machine's counters are read together, and a tick spans at
//     least half of WatchConfig.Every (watch_cpu.go): over a shorter one
//     the kernel's booking of CPU time is noise;
//   - wait: the 99th percentile of the time the process's goroutines
//     waited to run once ready, over the tick, at or above
//     WatchConfig.Wait, judged on ticks with at least minWaitSamples of
//     the runtime's samples (watch_sched.go reads them from Go's
//     /sched/latencies). This is the direct evidence the cpu rule only
//     stands in for: a VU woken by its sleep's timer, or by the netpoller
//     because its answer came in, that waits to run is the generator
//     delaying the load it was asked for or adding its own delay to the
//     latency it measures, whatever holds it up — its own CPU, GC assists,
//     VUs woken in a bunch queued behind each other, or other processes
//     (colocated agents, the target) holding the machine's cores, which a
//     process's share of the CPU cannot see. A slow target does not raise
//     it: a goroutine waiting for an answer is not runnable. Known
//     limits: the runtime samples about one transition in eight of each
//     goroutine, so a tick holds a sample of its wake-ups (and a quiet
//     process too few to judge); the reading is a floor, a bucket's lower
//     edge; and it counts goroutines queued in Go's run queues only: a
//     goroutine already running when the OS takes its thread off the
//     core waits unseen, only those queued behind it count, and an answer
//     that came in while none of the process's threads ran is not
//     runnable until the netpoller sees it (a machine full of other
//     processes delays the generator unseen: docs/performance.md). VUs
//     made together wait for each other, so a run's start on a crowded
//     machine may read as saturated for a tick or two;
//   - read: the mean read delay of the tick's answers — how long each
//     waited, after the kernel stamped its first byte's arrival, for the
//     generator to read it (engine.Meter.ReadDelay) — at or above
//     WatchConfig.Read, judged on ticks with at least minReadAnswers
//     answers. It is direct evidence where wait is blind: an answer the
//     kernel had and the generator had not read is the generator's delay,
//     whatever held it up — its goroutines queued in Go's run queues, its
//     threads off the cores (other processes holding the machine), the
//     netpoller not yet polled, an event loop busy with the turn before.
//     A slow target does not raise it: the delay starts when the answer
//     has arrived. Known limits: only transports that read the kernel's
//     receive stamps give a reading (the raw transport of script requests
//     and the event loop of URL runs, on Linux); fasthttp, net/http,
//     HTTP/2 and TLS give none, nor does a tick with no answers (an
//     outage, a target that answers nothing), so the rule then stays
//     silent and the others judge; and it measures the wait for the first
//     byte's read only, not the CPU a slow parse of the rest takes;
//   - lag (rate mode): the mean schedule lag of the tick's arrivals — how
//     late each first attempt was sent after its intended start — at or
//     above WatchConfig.Lag; a slow target does not raise it (an arrival
//     finds an idle worker at once or is dropped), a starved generator does;
//   - drop (rate mode, event loops): arrivals dropped (no slot free) in at
//     least WatchConfig.Drop of the tick's arrivals while the loops were
//     busy — not waiting for the target — at least WatchConfig.Busy of the
//     tick's wall time (loopbusy.go). A loop that cannot keep up does not start
//     arrivals late as a starved goroutine pool does: an answer that came
//     in sits unread while the loop works through the turn before, its
//     slot stays taken, and the next arrivals find none free and are
//     dropped, so its lag stays low. Drops alone do not tell it from a
//     slow target (its answers come late, the slots are taken waiting for
//     them, arrivals are dropped alike, and latency and in-flight grow the
//     same way in both: they are measured by the generator, its own delay
//     included); where the loop's time goes does: waiting for a slow
//     target's answers a loop sleeps nearly all the tick (0.3–0.8 % busy
//     measured), one that cannot keep up seldom does. Known limit: a loop
//     starved of CPU by other processes counts the time it waits to run
//     after a wake as idle (0.4–0.99 busy per tick at --rate 100000 under
//     a load average of 6–9 on 2 cores), so on a crowded machine the rule
//     fires on few ticks (docs/performance.md). Goroutine workers give no
//     busy reading: a pool that cannot keep up there starts its arrivals
//     late, which the lag rule judges;
//   - schedule (rate mode): the arrivals the scheduler produced (sent or
//     dropped) below WatchConfig.Shortfall × what the offer asked for over
//     a tick whose offer did not change: the scheduler itself cannot keep up.
//
// A tick is saturated when a rule holds in it and in the WatchConfig.Ticks − 1
// ticks before it (by default two in a row): a busy shared machine delays a
// goroutine for a few milliseconds now and then, and a generator that can
// keep up recovers within a tick. The verdict is the counters'
// GeneratorSaturated (so the governor reads it with the counters), the live
// view's and the report's "generator saturated at N/s", where N is the
// attempt rate reached over the saturated ticks.

// Defaults WatchConfig's zero fields take.
const (
	DefaultWatchEvery      = 250 * time.Millisecond
	DefaultSaturationLag   = 5 * time.Millisecond
	DefaultSaturationCPU   = 0.9
	DefaultSaturationSlip  = 0.8
	DefaultSaturationTicks = 2
	DefaultSaturationBusy  = 0.8
	DefaultSaturationDrop  = 0.01
	// DefaultSaturationWait is the wait rule's p99: above the runs
	// measured that kept up (1 000 VUs and --rate 2000, alone and beside
	// four CPU hogs on 2 cores at load ≤ 3.8: single ticks of 117–235 ms,
	// never two in a row; test binaries under -race beside the hogs: the
	// engine's at most 59 ms), and below the waits of 100 000-VU agents in
	// their stalls (windows' p99 latency 0.3–11 s; docs/performance.md,
	// "the wait rule").
	DefaultSaturationWait = 100 * time.Millisecond
	// DefaultSaturationRead is the read rule's mean read delay: the lag
	// rule's threshold, the same question (how late the generator acted on
	// an event it was due to act on) asked of answers instead of arrivals.
	// Runs that kept up read their answers within a few µs alone and
	// about 0.5 ms a tick with 15 000 VUs per agent (docs/performance.md).
	DefaultSaturationRead = DefaultSaturationLag
	// minReadAnswers is the fewest answers with a read delay a tick must
	// hold for the read rule to judge it, and for MaxReadDelay to count
	// it: below, one answer that waited behind a descheduled thread (a
	// few ms now and then on a shared machine) would decide the mean.
	minReadAnswers = 20
	// minScheduled is the fewest arrivals a tick must ask for before the
	// schedule rule judges it: at a low rate a tick's count is too coarse.
	minScheduled = 50
)

// WatchConfig tunes the generator's watch of itself. A zero field takes its
// default; a negative one turns its rule off.
type WatchConfig struct {
	// Every is the watch's tick (default DefaultWatchEvery).
	Every time.Duration
	// Lag is the mean schedule lag that marks a tick saturated (default
	// DefaultSaturationLag).
	Lag time.Duration
	// CPU is the share of the usable cores whose use marks a tick
	// saturated (default DefaultSaturationCPU), and of the machine's
	// cores a colocated process's tick needs busy too.
	CPU float64
	// Shortfall is the share of the offer's arrivals below which a tick
	// is saturated (default DefaultSaturationSlip).
	Shortfall float64
	// Ticks is how many ticks in a row a rule must hold (default
	// DefaultSaturationTicks).
	Ticks int
	// Drop is the share of a tick's arrivals dropped, and Busy the share
	// of the event loops' wall time spent working, at or above which
	// together a tick is saturated (defaults DefaultSaturationDrop and
	// DefaultSaturationBusy); a negative either turns the rule off.
	Drop, Busy float64
	// Wait is the 99th percentile of the tick's runnable waits (the
	// time goroutines waited to run) that marks a tick saturated
	// (default DefaultSaturationWait).
	Wait time.Duration
	// Read is the mean read delay of the tick's answers (how long they
	// waited in the kernel for the generator to read them) that marks a
	// tick saturated (default DefaultSaturationRead).
	Read time.Duration
	// Colocated is how many processes share this machine's cores, this
	// one included (a controller's N local agents); 0 or 1: it has them
	// to itself. The cpu rule then judges this process against its share
	// of them (usableCores) and, where the share binds, the machine's
	// busy cores too (watch_machine.go).
	Colocated int
}

func (c WatchConfig) withDefaults() WatchConfig {
	if c.Every <= 0 {
		c.Every = DefaultWatchEvery
	}
	if c.Lag == 0 {
		c.Lag = DefaultSaturationLag
	}
	if c.CPU == 0 {
		c.CPU = DefaultSaturationCPU
	}
	if c.Shortfall == 0 {
		c.Shortfall = DefaultSaturationSlip
	}
	if c.Ticks <= 0 {
		c.Ticks = DefaultSaturationTicks
	}
	if c.Drop == 0 {
		c.Drop = DefaultSaturationDrop
	}
	if c.Busy == 0 {
		c.Busy = DefaultSaturationBusy
	}
	if c.Wait == 0 {
		c.Wait = DefaultSaturationWait
	}
	if c.Read == 0 {
		c.Read = DefaultSaturationRead
	}
	return c
}

// GeneratorStatus is the watch's reading of its last tick.
type GeneratorStatus struct {
	// Saturated: the generator, not the target, limited the load in the
	// tick; Signal names the rule that said so ("cpu", "wait", "read",
	// "lag", "drop", "schedule").
	Saturated bool
	Signal    string
	// Held names the rule that held in this tick alone, before the
	// Ticks-in-a-row streak judged it ("" none): a tick can hold a rule
	// and not be saturated.
	Held string
	// Rate is the attempts started per second over the tick.
	Rate float64
	// Lag is the tick's mean schedule lag (0 in concurrency mode).
	Lag time.Duration
	// CPU is the cores the process used over the tick; -1 when the
	// platform does not say. Machine is the machine's busy cores over the
	// same tick, read for a colocated process's cpu rule alone (-1: not
	// read).
	CPU, Machine float64
	// Dropped is the share of the tick's arrivals dropped (rate mode).
	Dropped float64
	// Busy is the share of the event loops' wall time spent working over
	// the tick (rate mode); -1 without loops.
	Busy float64
	// Wait is the 99th percentile (a floor: watch_sched.go) and WaitMean
	// the mean of the time the process's goroutines waited to run over
	// the tick, from WaitSamples of the runtime's samples (0: no
	// reading). Runnable is the goroutines ready to run at the tick's
	// end (-1 unknown), a figure beside it.
	Wait, WaitMean time.Duration
	WaitSamples    uint64
	Runnable       int64
	// ReadDelay is the mean read delay of the tick's ReadAnswers answers
	// read with the kernel's receive stamps (0 answers: no reading).
	ReadDelay   time.Duration
	ReadAnswers uint64
}

// GeneratorSummary sums the watch over a phase.
type GeneratorSummary struct {
	// Ticks and SaturatedTicks count the watch's ticks, all and saturated.
	Ticks, SaturatedTicks int
	// Rate is the attempts per second over the saturated ticks: the rate
	// at which the generator saturated. 0 when no tick was.
	Rate float64
	// Signals counts saturated ticks by the rule that marked them.
	Signals map[string]int
	// MaxLag is the largest tick's mean schedule lag; PeakCPU the most
	// cores a tick used (-1 when unknown).
	MaxLag  time.Duration
	PeakCPU float64
	// PeakMachine is the machine's most busy cores in a tick, read for a
	// colocated process's cpu rule alone (-1: not read). MachineSpared
	// counts the ticks its share alone would have held for the cpu rule
	// that the machine's room let off (watch_machine.go).
	PeakMachine   float64
	MachineSpared int
	// MaxWait is the largest tick's 99th percentile runnable wait, over
	// the ticks with enough samples to judge (minWaitSamples).
	MaxWait time.Duration
	// MaxReadDelay is the largest tick's mean read delay, over the ticks
	// with enough answers to judge (minReadAnswers).
	MaxReadDelay time.Duration
}

// watchReading is one tick's cumulative readings.
type watchReading struct {
	at       time.Time
	cpu      time.Duration  // process CPU time so far; < 0 unknown
	machine  machineReading // the machine's counters, read with cpu
	started  uint64
	arrivals uint64
	lagSum   time.Duration
	lagged   uint64
	offer    float64
	dropped  uint64
	// loopWall and loopIdle: the event loops' wall time and the part of
	// it they spent waiting, so far (loopbusy.go); zero without loops.
	loopWall, loopIdle time.Duration
	// sched is the runtime's scheduling readings (watch_sched.go).
	sched schedReading
	// readSum and readN: the answers' summed read delay so far and how
	// many answers it holds (Counters.ReadDelay).
	readSum time.Duration
	readN   uint64
}

// watcher judges successive readings. Its methods are safe for concurrent
// use: the watch loop observes, Snapshot and Run read.
type watcher struct {
	cfg   WatchConfig
	rate  bool    // rate mode: the lag and schedule rules apply
	cores float64 // cores the process may use
	// cpu reads the process's CPU time so far (< 0 unknown): processCPU,
	// a test's fake process otherwise.
	cpu func() time.Duration
	// sched reads the runtime's scheduling metrics: a schedReader's,
	// a test's fake runtime otherwise.
	sched func() schedReading
	// machine reads the machine's counters for a colocated process's cpu
	// rule (watch_machine.go): /proc/stat, a test's fake machine otherwise.
	machine machineWatch

	mu       sync.Mutex
	prev     watchReading
	havePrev bool
	last     GeneratorStatus
	sum      GeneratorSummary
	satSecs  float64
	satN     float64
	streak   int // ticks in a row in which a rule held, this one included
	// schedPrev and schedBuckets: the runtime's wait histogram at prev
	// (a copy: the reading's slice is the reader's); empty without one.
	schedPrev    []uint64
	schedBuckets []float64
}

func newWatcher(rateMode bool, cfg WatchConfig) *watcher {
	return newWatcherOn(rateMode, cfg, runtime.GOMAXPROCS(0), runtime.NumCPU(), openMachine)
}

// newWatcherOn is newWatcher for a process of procs Ps (GOMAXPROCS) on a
// machine of cpus cores, whose machine reading, if its rule needs one,
// open makes.
func newWatcherOn(rateMode bool, cfg WatchConfig, procs, cpus int, open machineOpener) *watcher {
	cores := usableCores(procs, cpus, cfg.Colocated)
	w := &watcher{cfg: cfg.withDefaults(), rate: rateMode, cores: cores, cpu: processCPU, sched: newSchedReader().read,
		last: GeneratorStatus{CPU: -1, Machine: -1, Busy: -1, Runnable: -1}, sum: GeneratorSummary{PeakCPU: -1, PeakMachine: -1}}
	if machineBound(procs, cpus, cfg.Colocated) && w.cfg.CPU > 0 {
		src, why := open(cpus)
		w.setMachine(src, cpus, why)
	}
	return w
}

// usableCores is the cores a process may use: its GOMAXPROCS (procs) at
// most, and no more than the machine's (cpus) over the colocated
// processes sharing them (0 or 1: none shares them). N processes on one
// machine can fill it while none uses more than its Nth, so each is
// judged against that share; a process's GOMAXPROCS bounds it alone, not
// what the N together use (7 agents with GOMAXPROCS=1 on 2 cores: 2/7 of
// a core each, not 1/7).
func usableCores(procs, cpus, colocated int) float64 {
	return min(float64(procs), float64(cpus)/float64(max(colocated, 1)))
}

// observe judges the tick that ends at r and returns its status. A
// reading less than minSpan after the one before ends no tick: it is
// dropped, the tick runs on to the next reading, and the status stays the
// last tick's (watch_cpu.go says why).
func (w *watcher) observe(r watchReading) GeneratorStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.havePrev && r.at.Sub(w.prev.at) < w.minSpan() {
		return w.last
	}
	prev, had := w.prev, w.havePrev
	w.prev, w.havePrev = r, true
	var wait waitDist
	if had && r.sched.counts != nil && w.schedBuckets != nil {
		wait = waitOf(w.schedBuckets, w.schedPrev, r.sched.counts)
	}
	w.noteSched(r.sched)
	if !had {
		return w.last
	}
	dt := r.at.Sub(prev.at).Seconds()
	st := GeneratorStatus{CPU: -1, Machine: w.machineCores(prev.machine, r.machine), Busy: -1, Rate: float64(r.started-prev.started) / dt,
		Wait: wait.p99, WaitMean: wait.mean, WaitSamples: wait.n, Runnable: r.sched.runnable}
	if r.sched.counts == nil {
		st.Runnable = -1
	}
	judged := wait.n >= minWaitSamples
	if r.readN > prev.readN {
		st.ReadAnswers = r.readN - prev.readN
		st.ReadDelay = (r.readSum - prev.readSum) / time.Duration(st.ReadAnswers)
	}
	readJudged := st.ReadAnswers >= minReadAnswers
	if n := r.lagged - prev.lagged; n > 0 && w.rate {
		st.Lag = (r.lagSum - prev.lagSum) / time.Duration(n)
	}
	if r.cpu >= 0 && prev.cpu >= 0 {
		st.CPU = (r.cpu - prev.cpu).Seconds() / dt
	}
	if n := r.arrivals - prev.arrivals; n > 0 && w.rate {
		st.Dropped = float64(r.dropped-prev.dropped) / float64(n)
	}
	if wall := r.loopWall - prev.loopWall; wall > 0 && w.rate {
		st.Busy = min(max(float64(wall-(r.loopIdle-prev.loopIdle))/float64(wall), 0), 1)
	}
	asked := r.offer * dt
	cpuFull, spared := w.cpuFull(st)
	switch {
	case cpuFull:
		st.Signal = "cpu"
	case w.cfg.Wait > 0 && judged && st.Wait >= w.cfg.Wait:
		st.Signal = "wait"
	case w.cfg.Read > 0 && readJudged && st.ReadDelay >= w.cfg.Read:
		st.Signal = "read"
	case w.rate && w.cfg.Lag > 0 && st.Lag >= w.cfg.Lag:
		st.Signal = "lag"
	case w.rate && w.cfg.Drop > 0 && w.cfg.Busy > 0 && st.Busy >= w.cfg.Busy &&
		r.dropped > prev.dropped && st.Dropped >= w.cfg.Drop:
		st.Signal = "drop"
	case w.rate && w.cfg.Shortfall > 0 && prev.offer == r.offer && asked >= minScheduled &&
		float64(r.arrivals-prev.arrivals) < w.cfg.Shortfall*asked:
		st.Signal = "schedule"
	}
	st.Held = st.Signal
	if st.Signal == "" {
		w.streak = 0
	} else {
		w.streak++
	}
	st.Saturated = w.streak >= w.cfg.Ticks
	if !st.Saturated {
		st.Signal = ""
	}

	s := &w.sum
	s.Ticks++
	s.MaxLag = max(s.MaxLag, st.Lag)
	s.PeakCPU = max(s.PeakCPU, st.CPU)
	s.PeakMachine = max(s.PeakMachine, st.Machine)
	if spared {
		s.MachineSpared++
	}
	if judged {
		s.MaxWait = max(s.MaxWait, st.Wait)
	}
	if readJudged {
		s.MaxReadDelay = max(s.MaxReadDelay, st.ReadDelay)
	}
	if st.Saturated {
		s.SaturatedTicks++
		if s.Signals == nil {
			s.Signals = map[string]int{}
		}
		s.Signals[st.Signal]++
		w.satSecs += dt
		w.satN += float64(r.started - prev.started)
		s.Rate = w.satN / w.satSecs
	}
	w.last = st
	return st
}

// cpuFull is the cpu rule on st: the process used CPU × its usable cores
// and, when the tick has a machine reading (a colocated process bounded
// by its share: watch_machine.go), the machine was CPU × its cores busy.
// spared: the share held and the machine's room let the tick off.
func (w *watcher) cpuFull(st GeneratorStatus) (full, spared bool) {
	if w.cfg.CPU <= 0 || st.CPU < w.cfg.CPU*w.cores {
		return false, false
	}
	full = st.Machine < 0 || st.Machine >= w.cfg.CPU*w.machine.cores
	return full, !full
}

// judged says whether the reading taken at at ended a tick (observe
// drops one too close to the tick before).
func (w *watcher) judged(at time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.havePrev && w.prev.at.Equal(at)
}

// status is the last tick's.
func (w *watcher) status() GeneratorStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// summary is the phase's so far.
func (w *watcher) summary() GeneratorSummary {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.sum
	if s.Signals != nil {
		m := make(map[string]int, len(s.Signals))
		for k, v := range s.Signals {
			m[k] = v
		}
		s.Signals = m
	}
	return s
}

// saturatedRate is the attempt rate over the saturated ticks so far.
func (w *watcher) saturatedRate() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum.Rate
}

// reading takes the phase's cumulative readings now.
func (p *Phase) reading() watchReading {
	c := p.cfg.Counters
	lagSum, lagged := c.LagTotal()
	readSum, readN, _ := c.ReadDelay()
	ld := c.Load()
	at, cpu := stamp(p.clk.Now, p.watch.readCPU)
	r := watchReading{
		at:       at,
		cpu:      cpu.cpu,
		machine:  cpu.machine,
		started:  ld.Started,
		arrivals: p.arrivals.Load(),
		lagSum:   lagSum,
		lagged:   lagged,
		dropped:  ld.Dropped,
		sched:    p.watch.sched(),
		readSum:  readSum,
		readN:    readN,
	}
	r.loopWall, r.loopIdle = p.loopTime(r.at)
	if p.gate != nil {
		r.offer = p.gate.Offer()
		if p.probe.on.Load() {
			// An outage asks for its probes only (probe.go): the arrivals
			// held back are not the scheduler falling behind.
			r.offer = math.Min(r.offer, governor.OutageProbes/p.cfg.Tick.Seconds())
		}
	}
	return r
}

// watchLoop ticks the watch until stop closes, publishing each verdict to
// the counters (where the governor reads it with the rest of its evidence).
func (p *Phase) watchLoop(stop <-chan struct{}) {
	p.watch.observe(p.reading())
	t := p.clk.NewTicker(p.watch.cfg.Every)
	defer t.Stop()
	trace := openWatchTrace()
	defer trace.close()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
		}
		r := p.reading()
		st := p.watch.observe(r)
		if p.watch.judged(r.at) {
			trace.tick(r.at, st)
		}
		p.cfg.Counters.SetSaturated(st.Saturated, p.watch.saturatedRate())
		if p.gate != nil && p.cfg.Limits.Mode == governor.Rate {
			p.noteMissed(p.gate.Missed()) // the live view's and the windows' missed arrivals
		}
		p.reap() // the open loop's idle workers (pool.go)
	}
}
