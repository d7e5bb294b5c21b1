// Package script runs k6 scripts: `throttle run script.js`. A script is
// governed when it imports k6/x/throttle (or Config.Govern, --govern);
// otherwise every scenario runs as authored.
//
// Load loads the script's modules (package bundle: each ES module, local
// or TypeScript, a sobek module record compiled once for every VU; the k6
// modules synthetic records whose exports are the VU's module objects;
// anything unsupported refused with its file and line) and runs its init
// context in a first VU, which reads the exported options (package
// options) and records throttle.configure's settings. Every scenario
// becomes a Phase. Every problem with the script is an error from Load,
// before any traffic.
//
// Run calls setup() on that first VU, runs the phases (each from its
// startTime, concurrently where they overlap) and calls teardown(data).
// setup's return value crosses runtimes as JSON: every VU and teardown get
// their own copy.
//
// # VUs
//
// A VU is one sobek runtime, used by one goroutine at a time, in which the
// init context ran once: the script's modules, instantiated and evaluated
// in that runtime, top-level await included. A script whose module graph
// is simple (bundle.Plain: no cycle, no top-level await, no re-export…)
// runs its modules as plain functions instead, one per module compiled
// once per run (plainmod.go): the same semantics, without the module
// records' per-VU cost; THROTTLE_MODULES=esm keeps every script on the
// module records. Its module objects, its HTTP
// request and result and its sleep timer are made once and reused; a Response is a small Go
// value shown to JavaScript as a dynamic object whose fields are built only
// when read, so an iteration that makes one request and looks at its
// status allocates little beyond the request itself.
//
// # Phases
//
// A Phase is one scenario on the phase runtime (package phase) with a VU
// as its worker: its own gate, governor, window evidence, generator watch
// and attempt counters. Arrival-rate executors are rate mode (open loop:
// an idle VU takes each admission, the pool grows from preAllocatedVUs to
// maxVUs, an arrival that finds none is dropped and counted); VU executors
// are concurrency mode (each VU holds a permit per iteration). The
// authored value is the ceiling; for the ramping executors the authored
// stage value at each moment is, read four times a second: governed, the
// offer never exceeds it; not governed, the offer follows it. The
// iteration executors always run as authored. A phase stops scheduling at
// the end of its schedule, gives in-flight iterations its gracefulStop,
// then aborts their requests and interrupts their JavaScript.
//
// # Attempts
//
// Every request of a scenario is one attempt, run by the engine's iteration
// seam, the same one the URL engine uses: each VU has an engine.Runner per
// request lane (one, plus one per extra request of an http.batch), each on
// its own engine.Driver whose FailedFunc applies the response callback of
// the request it sends (k6's expected statuses, 200-399 by default; a
// transport error or timeout always fails). Every driver of a phase
// records into the phase's engine.Meter, which is the governor's evidence
// (Phase implements governor.LoadCounters by it) and the report's counts. An
// iteration is ok when none of its requests failed (with throttle.tries,
// the last try's) and it did not throw. Attempts cut off by the phase's own
// abort are counted apart and say nothing about the target.
//
// # Metrics hook
//
// Config.Samples receives every resolved request (phase, group, method,
// URL, name, status, tags, timings, sizes) and Phase.Checks the check()
// counts by group and name. Runner.Summary builds k6's end-of-test
// summary from the run's metrics (built-in and the script's own, with the
// same histograms thresholds read) and those check counts: its tree of
// groups, --summary-export's JSON and handleSummary's data object, which
// Run passes to an exported handleSummary after teardown. Config.Points
// receives every metric value with its tags (k6's JSON output).
package script
