// Package engine is throttle's HTTP load engine: one governed load phase
// against a set of HTTP targets, measured honestly.
//
// A phase joins three parts. The gate (package gate) admits iterations at
// the offer; the governor (package governor) reads the engine's cumulative
// counters (a Meter, which is a governor.LoadCounters) every tick, judges
// each window and moves the offer through the control path; the engine
// sends the requests and counts what became of them.
//
// # Modes
//
// Open-loop rate mode: a scheduler takes each admission from the rate gate
// (Permit.Due is the arrival's intended start) and hands it to an idle
// worker of a bounded pool (Config.MaxVUs), starting workers lazily. An
// arrival that finds every worker busy is dropped and counted, never
// silently skipped. Latency is measured from the intended start, so a
// target that slows down cannot slow the measurement with it (no coordinated
// omission).
//
// Closed-loop concurrency mode: workers iterate back to back, each iteration
// holding a permit of the concurrency gate, so at most the offer are in
// flight. Workers are started as the offer first reaches them (never more
// than the ceiling); when the offer falls the extra workers wait at the gate.
//
// # The iteration seam
//
// Every attempt of a phase goes through one type, Runner (iteration.go),
// made by a Driver that holds what a phase's runners share: the Meter, the
// latency recorder, tries, timeout, the failed decision, the --slow budget
// and the transport. The URL engine gives each worker a Runner; the script
// runner gives each VU one and calls Runner.Iterate for every request a
// script makes. Iterate sends a Request (method, URL, headers, body, its
// own timeout and redirect limit) up to Tries times with a small jittered,
// capped, exponential backoff between tries, and fills a Response (status,
// proto, headers and body unless discarded, error and k6-style error code,
// class, per-attempt timings, bytes). Every attempt counts once into the
// attempt plane: started, then ok or failed by outcome Class, its latency.
// Iterations are counted by their final outcome too, so the report can put
// "ok % after tries" beside the attempt-failure % that retries hide.
//
// One classification serves both transports: classify maps a transport
// error or a status to the class the attempt has if it fails; a FailedFunc
// (FailOn's rule for the URL engine; expected statuses for scripts) decides
// whether it does; an otherwise ok attempt slower than Config.Slow fails
// as ClassSlow.
//
// # Transports
//
// HTTP/1.1 goes through fasthttp by default. Each Runner owns one
// keep-alive connection per host (a fasthttp.HostClient with one
// connection), so the phase's connections are sized to its workers, no
// runner waits for or shares a connection, and the runner's own wrapped
// connection times the attempt (connecting, TLS handshake, sending,
// waiting, receiving) without a lock. The wire request and response are
// acquired once per runner and reused; the request is rebuilt only when
// the runner is handed a different Request. TLS is verified unless
// Config.Insecure. Config.HTTP2 switches to net/http (one shared pool,
// HTTP/2 where the server offers it over TLS), timed with httptrace.
//
// # The generator watches itself
//
// Every WatchConfig.Every the engine reads its own CPU time, the schedule
// lag of the tick's arrivals (when each was sent after its intended start)
// and how many arrivals the scheduler produced against what the offer
// asked for. When any shows the generator, not the target, limiting the
// load, the tick is saturated: the Meter's Load says GeneratorSaturated (so
// the governor can discount the window), and the live view and the report
// say "generator saturated at N/s". See watch.go for the rules.
//
// # Stopping
//
// A phase ends when its duration passes or Run's context ends (Ctrl-C): the
// governor stops, no new arrival is admitted and no new try is started, the
// in-flight iterations get the grace period to finish and are then aborted
// (Abort cuts the grace short: it closes the runners' connections). Aborted
// attempts are counted apart: they are the engine's doing, not the
// target's. Run returns the full Result either way.
//
// # Cost
//
// The hot path takes no lock of the engine's (the latency recorder and the
// concurrency gate have their own) and allocates nothing per request:
// counters are padded atomics; a worker reuses its Runner's fasthttp
// request, response and connection and its own Response; a discarded body
// is read into the reused buffer and never copied.
package engine
