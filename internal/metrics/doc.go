// Package metrics exports a running throttle phase to Prometheus: the
// governor's state, the engine's counters, the attempt latency histogram,
// the built-in target's counters and a k6 script's custom metrics, served on
// /metrics while a run lasts (throttle run|demo|target --metrics ADDR).
//
// Nothing here counts anything on the hot path. Every series is read at
// scrape time from what the engine, the governor, the latency recorder and
// the target already keep (custom prometheus.Collectors over
// engine.Snapshot, report.Recorder.Cumulative and target.Stats); the only
// thing tallied here is the closed windows' decisions, once per window, from
// the governor's observer. A scrape costs one Snapshot, one histogram merge
// and a few hundred bytes of exposition per phase.
//
// Every series carries a phase label ("main" for run and demo, "target" for
// a standalone target). The series, all prefixed throttle_:
//
//	offer                      gauge    the governor's committed offer (0 before the phase starts)
//	ceiling, floor             gauge    the phase's limits
//	high, low                  gauge    the failure bound and the clean threshold (fractions)
//	last_bad                   gauge    the congestion memory; NaN while unexplored
//	memory_streak              gauge    clean windows at or above last_bad in a row
//	window_failure_fraction    gauge    the newest closed window's attempt-failure fraction; NaN before one
//	windows_total              counter  windows closed
//	decisions_total{signal}    counter  closed windows by the rule that decided them (governor.Signal names)
//	attempts_total{result,class} counter resolved attempts: result ok|failed, class ok|refused|reset|timeout|5xx|429|other
//	aborted_attempts_total     counter  attempts cut off by the engine's own stop
//	iterations_total{result}   counter  iterations by final outcome after tries: ok|failed
//	dropped_arrivals_total     counter  rate-mode arrivals that found no free worker
//	missed_arrivals_total      counter  rate-mode arrivals the generator fell too far behind the schedule to make
//	in_flight, workers         gauge    iterations in flight, workers running
//	attempt_duration_seconds   histogram latency of resolved attempts from their intended start
//	target_capacity            gauge    the built-in target's capacity (demo, target)
//	target_served_total, target_shed_total, target_expired_total,
//	target_collapsed_total, target_down_total, target_canceled_total,
//	target_zombies_total       counter  the target's answers by outcome; zombies: abandoned requests the backlog model served anyway
//	target_in_flight, target_queued gauge the target's requests in progress and queued
//
// Wiring a host: the engine (run, demo) gets NewPhase(name, recorder) with
// its Observe chained into engine.Config.Observer, then Register with
// Source{Limits, Snapshot}; a script phase, which keeps its windows, needs
// no observer: Register(NewPhase(ph.Name(), ph.Recorder()),
// Source{Limits: ph.Limits(), Snapshot: ph.Snapshot, Windows: ph.Windows}),
// one per scenario. A script's custom metrics (k6/metrics Counter, Gauge,
// Rate, Trend) are declared by the script runner through Registry.Custom
// and exported under the names the script declared (see Custom).
package metrics
