// Package phase is throttle's one load-phase runtime: what a URL run
// (internal/engine) and every k6 script scenario (internal/script) run on.
// The host gives it a Worker factory (a worker sends one request, or runs
// one JavaScript iteration) and the Counters its workers record into; the
// phase does the rest:
//
//   - the gate (package gate) admits iterations at the offer; the governor
//     (package governor) reads the Counters every tick, judges each window
//     and moves the offer through the control path; the windows it closes
//     are kept for the report;
//   - open loop (governor.Rate): a scheduler takes each admission from the
//     rate gate (its due instant is the arrival's intended start) and hands
//     it to an idle worker of a bounded pool, starting workers lazily; an
//     arrival that finds none free is dropped and counted, never skipped
//     silently; the schedule begins at the phase's start and ends at its
//     duration (gate.Begin, gate.End: k6's k/rate for t < duration), and
//     the arrivals the scheduler fell too far behind to make, or left due
//     at the end, are counted missed (Counters.Miss), so the schedule's
//     arrivals = started + dropped + missed, exactly; an authored ramp
//     not governed runs its mean over each RampStep (the area under the
//     stages, as k6); the schedule lag (start − due) is counted for the
//     watch;
//     workers idle for RetireTicks watch ticks retire, down to a floor
//     (pool.go), so the pool follows the need;
//   - closed loop (governor.Concurrency): workers iterate back to back,
//     each iteration holding a permit of the concurrency gate; workers are
//     started as the offer first reaches them; a host may run them as
//     event loops instead of a goroutine each (Config.NewLoop, loop.go),
//     taking each iteration from its Lane without blocking;
//   - a fixed amount of iterations (Config.Iterations: k6's
//     per-vu-iterations, shared-iterations) runs as authored, no gate, no
//     governor;
//   - an authored schedule (Config.Ceiling: a ramping executor's stages)
//     is read every RampStep: governed, it is the ceiling at that moment
//     (the offer never exceeds what the author would have run then);
//     not governed, the offer follows it; closed loop with
//     Config.RampDownGrace (k6's gracefulRampDown), the iterations in
//     flight above a falling schedule run on for the grace, then each is
//     cut off on its own (Interrupter, rampdown.go);
//   - the generator watches itself (watch.go): its CPU, the schedule lag
//     and the arrivals produced against the offer; a saturated tick is
//     published to the Counters, so the governor does not take the
//     generator's limit for the target's;
//   - stopping: at the duration's end (or ctx's, or when the iterations are
//     done) the governor stops first, then the schedule; Stopping closes
//     (no new iteration, no new retry); in-flight iterations get the grace
//     period, then Hard is cancelled and Config.Aborting called.
//
// Time is an input: the gate, the governor, the ramp, the watch and the
// duration follow Config.Clock, so tests drive a phase with a fake clock.
package phase
