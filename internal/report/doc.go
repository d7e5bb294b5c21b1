// Package report is throttle's end-of-run report: what a governed phase
// found about its target, and the evidence for it.
//
// The engine feeds it in two steps. During the run, a Recorder takes every
// attempt's latency (Record, from any goroutine, cheap and sharded) and every
// closed governor window (Observe, from governor.WithObserver), so latencies
// can be given at the capacity level — over the settled windows — beside the
// run's overall latencies. At the end, Build takes an Input (the phase's
// settings, the closed windows, the attempt counts by outcome class, the
// iteration counts, the dropped arrivals and Recorder.Summary) and returns a
// Report:
//
//   - the verdict: the capacity at the failure bound (governor.Capacity over
//     the settled windows; goodput, offer and throughput), or why there is
//     none: held at the ceiling, never settled, still searching, no
//     evidence, interrupted before any window closed, not governed;
//   - latency percentiles (p50, p90, p99, p99.9, max) at that level and
//     overall, from HDR histograms;
//   - attempts by outcome class, with the attempt-failure % beside the
//     iterations' ok % after tries, so retries cannot hide failures;
//   - dropped and missed arrivals, and saturation windows (failure fraction
//     above high) flagged and excluded from the capacity.
//
// # Every arrival accounted for
//
// In rate mode every arrival the schedule asked for — at a constant rate r
// over a duration d, ⌈r × d⌉ of them, k6's count — is exactly one of:
//
//	asked for = started + dropped_arrivals + missed_arrivals
//	started   = iterations.total + iterations cut off by the stop
//
// Dropped arrivals found no free worker (the worker bound limited the
// load: a fact about the target's latency or --max-vus). Missed arrivals
// were never made: the generator fell behind its schedule by more than its
// slack (10 ms), or the run ended with them due; they are the generator's
// shortfall, never evidence against the target. An iteration cut off by the
// stop is neither ok nor failed; its attempt in flight is counted in
// aborted_attempts (a URL run's iteration has one attempt in flight at a
// time, so there each aborted attempt is one iteration cut off).
//
// read_delay is how long answers waited in the kernel, after they arrived,
// for the generator to read them: on Linux, the event-loop and raw
// transports read with the kernel's receive stamps and end each answer's
// timings at its bytes' arrival, so a generator short of CPU does not
// report its own queueing as the target's latency; this is that queueing.
// answers is 0 where nothing was stamped (other transports and systems,
// THROTTLE_RXSTAMP=0, runs over agents).
//
// "Settled windows", throughout the report, are the windows the capacity
// rests on: those governor.Steady picks (settled by governor.Settled, at an
// offer within ±15 % of the level the phase settled at). The capacity
// figure, the verdict's window count, the latency at capacity and the
// timeline's settled flags all come from that one set, so an early hold at
// a far lower offer, or the level before the target's capacity changed,
// never colours the latency at capacity.
//
// A Report writes itself as text for a terminal (WriteText), as JSON
// (WriteJSON), as a CSV timeline with one row per window (WriteCSV) and as
// a chart of offer, throughput, goodput and attempt-fail % over time with
// the bound drawn (WriteChart: SVG, PNG, or an HTML page embedding the SVG
// that opens offline). The Save* methods write files whole or not at all.
//
// # JSON schema
//
// The JSON document is the Report type; every field is documented there and
// in the types it holds. Its shape, with schema_version 1:
//
//	{
//	  "schema_version": 1,
//	  "outcome": "capacity",            // see Outcome
//	  "verdict": "capacity ≈ 797 req/s at ≤ 5 % attempt failures (12 settled windows)",
//	  "notes": ["…"],                   // caveats; [] when none
//	  "settings": {"mode", "unit", "ceiling", "floor", "start", "high", "low",
//	               "window_s", "tick_s", "min_attempts", "governed", "early_breach", "evidence", "target",
//	               "transport"},
//	  "run": {"start", "end", "duration_s", "interrupted"},
//	  "capacity": {"found", "settled_windows", "offer", "goodput_per_s",
//	               "throughput_per_s", "attempt_fail_frac", "at_ceiling",
//	               "saturated_windows"},
//	  "latency": {"at_capacity": P, "overall": P, "clamped"},
//	      // P = {"count", "min_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms",
//	      //      "p99_9_ms", "max_ms"}
//	  "attempts": {"total", "ok", "failed", "fail_frac",
//	               "by_class": {"refused", "reset", "timeout", "5xx", "429", "other", "slow", "dns", "tls"}},
//	  "iterations": {"total", "ok", "failed", "ok_frac"},
//	  "dropped_arrivals": 0,
//	  "missed_arrivals": 0,
//	  "aborted_attempts": 0,
//	  "read_delay": {"answers", "mean_ms", "max_ms"},
//	  "windows": [{"index", "start_s", "end_s", "offer", "ok", "failed", "frac",
//	               "attempts_per_s", "goodput_per_s", "signal", "kind", "early",
//	               "next_offer", "last_bad", "streak", "settled", "saturated",
//	               "p50_ms", "p99_ms", "fail_frac", "dropped", "queued",
//	               "unserved", "mean_ms", "inflation", "generator_saturated",
//	               "drained_s", "by", "missed"}],
//	  "earlier_windows": 0,
//	  "generator": {"saturated", "saturated_at_per_s", "saturated_ticks", "ticks",
//	                "signals": {"cpu", "wait", "read", "lag", "schedule", "drop"}, "max_wait_ms",
//	                "max_read_delay_ms"}
//	}
//
// A k6 script run writes Phased instead: the same document for its first
// governed scenario (its first scenario when none is governed), plus
// "phases": [{"phase", "executor", ...every field above...}], one per
// scenario in start order.
//
// Fractions are in [0, 1], rates per second, run times in seconds since the
// run's start, latencies in milliseconds. Fields are never omitted; a figure
// that was not measured is 0. SchemaVersion changes when a field is renamed,
// removed or changes meaning; new fields may be added within a version. The
// golden file testdata/report.golden.json pins the schema.
package report
