package report

import "time"

// Report is the end-of-run report. Its JSON encoding is the stable schema
// documented field by field below and in the package doc; SchemaVersion
// says which version of it a document follows. Rates are per second,
// fractions are in [0, 1] (not percent), durations of the run are seconds
// and latencies milliseconds. Numbers are rounded: rates and offers to 3
// decimals, fractions to 6, milliseconds to 3 (a microsecond).
type Report struct {
	// SchemaVersion is the schema's version (SchemaVersion, now 1).
	SchemaVersion int `json:"schema_version"`
	// Outcome is what the run found: capacity, at_ceiling, never_settled,
	// unsettled, no_evidence, no_windows or not_governed (see Outcome).
	Outcome Outcome `json:"outcome"`
	// Verdict says the outcome in one line for people.
	Verdict string `json:"verdict"`
	// Notes are caveats a reader should not miss (saturated windows,
	// dropped arrivals, retries hiding failures, …); empty when none.
	Notes []string `json:"notes"`
	// Settings are the phase's configuration.
	Settings SettingsJSON `json:"settings"`
	// Run is when the run happened.
	Run Run `json:"run"`
	// Capacity is the estimate at the failure bound (governor.Capacity).
	Capacity CapacityJSON `json:"capacity"`
	// Latency is the attempts' latency at the capacity level and overall.
	Latency LatencyJSON `json:"latency"`
	// Attempts counts every try, retries included, by outcome class.
	Attempts AttemptsJSON `json:"attempts"`
	// Iterations counts iterations: ok after tries, or failed.
	Iterations IterationsJSON `json:"iterations"`
	// DroppedArrivals counts rate-mode arrivals that found no free worker.
	DroppedArrivals uint64 `json:"dropped_arrivals"`
	// MissedArrivals counts rate-mode arrivals the schedule asked for that
	// the generator never made: it fell behind the schedule by more than
	// its slack (10 ms), or the run ended with them due. Neither sent nor
	// dropped; every arrival the schedule asked for is exactly one of
	// started (an iteration: ok, failed, or cut off by the stop), dropped
	// or missed.
	MissedArrivals uint64 `json:"missed_arrivals"`
	// AbortedAttempts counts attempts cut off by the run's own stop (its
	// grace period after an interrupt ran out): neither ok nor failed, and
	// not in Attempts.
	AbortedAttempts uint64 `json:"aborted_attempts"`
	// ReadDelay is how long answers waited in the kernel, after they
	// arrived, for the generator to read them; answers 0 where no answer
	// was read with the kernel's receive stamps (they are Linux's, on the
	// event-loop and raw transports; runs over agents do not gather them
	// yet). The answers' timings leave this wait out.
	ReadDelay ReadDelayJSON `json:"read_delay"`
	// Windows is the timeline: one entry per closed governor window, the
	// newest KeepWindows of them (the CSV timeline has every one).
	Windows []WindowJSON `json:"windows"`
	// EarlierWindows counts the windows that closed before Windows[0] (a
	// run longer than KeepWindows windows: windows[0].index); 0 otherwise.
	EarlierWindows int `json:"earlier_windows"`
	// Generator is the load generator's watch of itself.
	Generator GeneratorJSON `json:"generator"`

	timeline       *timeline // the streamed windows, for WriteCSV
	earlierOutages []string  // outages among the windows before Windows
}

// GeneratorJSON is the "generator" object: whether the load generator
// itself was the bottleneck in part of the run.
type GeneratorJSON struct {
	// Saturated is true when any watch tick found the generator, not the
	// target, limiting the load (its CPU, its goroutines' wait to run,
	// its schedule lag, or its scheduler falling short of the offer).
	Saturated bool `json:"saturated"`
	// SaturatedAtPerS is the attempts per second over the saturated
	// ticks; 0 when none.
	SaturatedAtPerS float64 `json:"saturated_at_per_s"`
	// SaturatedTicks of Ticks watch ticks were saturated.
	SaturatedTicks int `json:"saturated_ticks"`
	Ticks          int `json:"ticks"`
	// Signals counts saturated ticks by the rule that marked them.
	Signals GeneratorSignals `json:"signals"`
	// MaxWaitMs is the largest watch tick's 99th percentile of the time
	// the generator's goroutines waited to run once ready (the Go
	// runtime's /sched/latencies, sampled), over the ticks with enough
	// samples to judge; with agents, the largest of any agent. 0 when
	// no tick had enough.
	MaxWaitMs float64 `json:"max_wait_ms"`
	// MaxReadDelayMs is the largest watch tick's mean read delay: how long
	// the tick's answers waited in the kernel, after they arrived, for the
	// generator to read them, over the ticks with enough answers to judge
	// (transports with the kernel's receive stamps only: the raw transport
	// and the event loop on Linux); with agents, the largest of any agent.
	// 0 when no tick had a reading.
	MaxReadDelayMs float64 `json:"max_read_delay_ms"`
}

// GeneratorSignals is "generator.signals": saturated ticks by rule.
type GeneratorSignals struct {
	// CPU: the process used nearly all the cores it may use.
	CPU int `json:"cpu"`
	// Wait: the generator's goroutines waited to run (its answers read
	// late, its iterations started late) at the 99th percentile for at
	// least the wait threshold.
	Wait int `json:"wait"`
	// Read: the tick's answers waited in the kernel, after they arrived,
	// for the generator to read them, for at least the read threshold on
	// the mean.
	Read int `json:"read"`
	// Lag: arrivals were sent late after their intended start.
	Lag int `json:"lag"`
	// Schedule: the scheduler produced fewer arrivals than the offer.
	Schedule int `json:"schedule"`
	// Drop: arrivals were dropped while the event loops were busy
	// working, not waiting for the target.
	Drop int `json:"drop"`
}

// SettingsJSON is the "settings" object.
type SettingsJSON struct {
	// Mode is "rate" (the offer is iterations per second, open loop) or
	// "concurrency" (iterations in flight, closed loop).
	Mode string `json:"mode"`
	// Unit is the offer's unit: "iterations/s" or "concurrent iterations".
	Unit string `json:"unit"`
	// Ceiling, Floor and Start bound the offer and open it.
	Ceiling float64 `json:"ceiling"`
	Floor   float64 `json:"floor"`
	Start   float64 `json:"start"`
	// High is the failure bound (a window above it backs off) and Low the
	// clean threshold, as attempt-failure fractions.
	High float64 `json:"high"`
	Low  float64 `json:"low"`
	// WindowS is the window length and TickS the counter-reading period,
	// in seconds.
	WindowS float64 `json:"window_s"`
	TickS   float64 `json:"tick_s"`
	// MinAttempts is the evidence a window needs.
	MinAttempts uint64 `json:"min_attempts"`
	// Governed is false for a baseline run at fixed load.
	Governed bool `json:"governed"`
	// EarlyBreach is true when a gross breach could close a window before
	// its full length (windows[].early marks those that did); false is the
	// seed's exact cadence.
	EarlyBreach bool `json:"early_breach"`
	// Evidence lists the kinds of evidence beyond failed attempts the
	// governor read (governor.Evidence: unserved, latency, drain,
	// generator), "none" for the seed's rule.
	Evidence string `json:"evidence"`
	// Target describes what was loaded.
	Target string `json:"target"`
	// Transport is the HTTP client a URL run's attempts, or a k6
	// script's plain http:// requests, went through: "evloop" (throttle's
	// event loop, URL runs), "raw" (throttle's HTTP/1.1 client, scripts),
	// "fasthttp" or "net/http" (--http2); "" for other runs (agents).
	Transport string `json:"transport"`
}

// Run is the "run" object.
type Run struct {
	// Start and End are RFC 3339 timestamps in UTC.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// DurationS is End − Start in seconds.
	DurationS float64 `json:"duration_s"`
	// Interrupted is true when the run was stopped before its duration.
	Interrupted bool `json:"interrupted"`
}

// CapacityJSON is the "capacity" object: the throttled steady state over
// the settled windows (governor.Steady: the windows governor.Capacity rests
// on). Saturated windows never count toward it.
type CapacityJSON struct {
	// Found is true when at least one window settled and something near
	// its level showed a limit; the figures below are 0 when no window
	// settled (except SaturatedWindows), and what the settled windows
	// measured when they showed no limit (outcome no_limit). A run that was
	// not governed never finds a capacity.
	Found bool `json:"found"`
	// SettledWindows is how many windows the estimate rests on.
	SettledWindows int `json:"settled_windows"`
	// Offer is the mean committed offer over the settled windows.
	Offer float64 `json:"offer"`
	// GoodputPerS is ok attempts per second over the settled windows: the
	// capacity figure.
	GoodputPerS float64 `json:"goodput_per_s"`
	// ThroughputPerS is resolved attempts (ok and failed) per second over
	// the settled windows.
	ThroughputPerS float64 `json:"throughput_per_s"`
	// AttemptFailFrac is the attempt-failure fraction over them.
	AttemptFailFrac float64 `json:"attempt_fail_frac"`
	// AtCeiling is true when they held at the ceiling: the capacity is at
	// least the ceiling, not at it.
	AtCeiling bool `json:"at_ceiling"`
	// SaturatedWindows counts windows whose failure fraction was above
	// high: flagged and excluded.
	SaturatedWindows int `json:"saturated_windows"`
	// HeldBy names the evidence that held the offer at the capacity level:
	// "failures", "unserved" or "latency" (see the report's HeldBy
	// constants); "" when no capacity was found or it held at the ceiling.
	HeldBy string `json:"held_by"`
}

// LatencyJSON is the "latency" object.
type LatencyJSON struct {
	// AtCapacity covers attempts resolved during the settled windows, the
	// windows the capacity rests on (count 0 in a run that was not
	// governed).
	AtCapacity Percentiles `json:"at_capacity"`
	// Overall covers every recorded attempt.
	Overall Percentiles `json:"overall"`
	// Clamped counts latencies over one hour, recorded as one hour.
	Clamped uint64 `json:"clamped"`
}

// Percentiles summarize a set of latencies, in milliseconds, from an HDR
// histogram (within 0.1 %). Latency is measured from an attempt's intended
// start. Count 0 means nothing was recorded and every figure is 0.
type Percentiles struct {
	Count  int64   `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p99_9_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// AttemptsJSON is the "attempts" object.
type AttemptsJSON struct {
	// Total = OK + Failed.
	Total  uint64 `json:"total"`
	OK     uint64 `json:"ok"`
	Failed uint64 `json:"failed"`
	// FailFrac is Failed / Total: the attempt-failure fraction the governor
	// works on, to read beside Iterations.OKFrac.
	FailFrac float64 `json:"fail_frac"`
	// ByClass splits Failed; its counts add up to Failed.
	ByClass ClassesJSON `json:"by_class"`
}

// ClassesJSON is "attempts.by_class": failed attempts by class.
type ClassesJSON struct {
	// Refused: the connection was refused.
	Refused uint64 `json:"refused"`
	// Reset: the connection was reset or closed mid-exchange.
	Reset uint64 `json:"reset"`
	// Timeout: no answer within the per-attempt timeout.
	Timeout uint64 `json:"timeout"`
	// Status5xx and Status429: answers with those statuses.
	Status5xx uint64 `json:"5xx"`
	Status429 uint64 `json:"429"`
	// Other: any other failure (other transport errors, other statuses the
	// run counts as failed).
	Other uint64 `json:"other"`
	// Slow: answers otherwise ok but slower than the latency budget (--slow).
	Slow uint64 `json:"slow"`
	// DNS: the host name did not resolve ("could not resolve").
	DNS uint64 `json:"dns"`
	// TLS: the TLS handshake failed (untrusted or wrong certificate, an
	// alert, a peer that does not speak TLS).
	TLS uint64 `json:"tls"`
}

// IterationsJSON is the "iterations" object.
type IterationsJSON struct {
	// Total = OK + Failed.
	Total uint64 `json:"total"`
	// OK iterations succeeded after however many tries they took.
	OK uint64 `json:"ok"`
	// Failed iterations failed every try.
	Failed uint64 `json:"failed"`
	// OKFrac is OK / Total: the "ok % after tries" that retries keep green.
	OKFrac float64 `json:"ok_frac"`
}

// WindowJSON is one entry of "windows", and one row of the CSV timeline,
// whose columns are the same names in the same order without index and
// next_offer (see CSVHeader).
type WindowJSON struct {
	// Index is the window's position, from 0.
	Index int `json:"index"`
	// StartS and EndS are seconds since the run started.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Offer is the committed offer the window was judged at.
	Offer float64 `json:"offer"`
	// OK and Failed are the attempts resolved in the window.
	OK     uint64 `json:"ok"`
	Failed uint64 `json:"failed"`
	// Frac is Failed / (OK + Failed), 0 when nothing resolved.
	Frac float64 `json:"frac"`
	// AttemptsPerS is resolved attempts per second (throughput) and
	// GoodputPerS ok attempts per second, over the window.
	AttemptsPerS float64 `json:"attempts_per_s"`
	GoodputPerS  float64 `json:"goodput_per_s"`
	// Signal is the rule that decided the window (slow-start, safe-climb,
	// probe, back-off, dead-band, no-evidence, at-ceiling, at-floor,
	// memory-cleared, generator-saturated, outage: the target unreachable,
	// the offer held; latency: the latency knee held it) and Kind its direction (raise, lower, hold).
	Signal string `json:"signal"`
	Kind   string `json:"kind"`
	// Early is true for a window an early breach closed before its full
	// length: its evidence so far was above high with 99 % confidence.
	Early bool `json:"early"`
	// NextOffer is the offer the window asked for next.
	NextOffer float64 `json:"next_offer"`
	// LastBad is the congestion memory after the window, 0 when unexplored.
	LastBad float64 `json:"last_bad"`
	// Streak is the memory-clearing streak after the window.
	Streak int `json:"streak"`
	// Settled windows are those the capacity rests on (governor.Steady;
	// capacity.settled_windows counts them); never in a run that was not
	// governed.
	Settled bool `json:"settled"`
	// Saturated windows failed above high: excluded, flagged.
	Saturated bool `json:"saturated"`
	// P50Ms and P99Ms are the latency of the attempts resolved in the
	// window; 0 when none was recorded.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// FailFrac is the attempt-failure fraction alone; Frac is what the
	// window was judged on and also holds the evidence below.
	FailFrac float64 `json:"fail_frac"`
	// Dropped arrivals and the growth of in-flight attempts (Queued,
	// negative when they fell) over the window; Unserved is what of both
	// entered Frac (rate mode).
	Dropped  uint64 `json:"dropped"`
	Queued   int64  `json:"queued"`
	Unserved uint64 `json:"unserved"`
	// MeanMs is the mean latency of the window's resolved attempts, and
	// Inflation its ratio to the run's low-load baseline (concurrency mode
	// latency knee; 0 when not read).
	MeanMs    float64 `json:"mean_ms"`
	Inflation float64 `json:"inflation"`
	// GeneratorSaturated: the host said it was saturated at a tick of the
	// window; its unserved load was not counted.
	GeneratorSaturated bool `json:"generator_saturated"`
	// DrainedS is how long the window's start waited for the attempts of
	// the offer before a back-off to resolve.
	DrainedS float64 `json:"drained_s"`
	// By names the evidence that decided the window when failed attempts
	// alone did not: unserved, latency or generator; "" otherwise.
	By string `json:"by"`
	// Missed counts the arrivals the generator missed — the schedule
	// asked for them and it fell too far behind to make them — since the
	// window before closed (rate mode). Unlike Dropped they say nothing
	// about the target and never enter Frac.
	Missed uint64 `json:"missed"`
}

func latencyJSON(l Latency) Percentiles {
	return Percentiles{
		Count:  l.Count,
		MinMs:  ms(l.Min),
		MeanMs: ms(l.Mean),
		P50Ms:  ms(l.P50),
		P90Ms:  ms(l.P90),
		P99Ms:  ms(l.P99),
		P999Ms: ms(l.P999),
		MaxMs:  ms(l.Max),
	}
}

// ReadDelayJSON is the "read_delay" object.
type ReadDelayJSON struct {
	// Answers counts the answers read with the kernel's stamps.
	Answers uint64 `json:"answers"`
	// MeanMS and MaxMS are their read delays' mean and longest: a few
	// µs on a generator with CPU to spare; more is the generator's own
	// queueing (short of CPU), not the target's latency.
	MeanMS float64 `json:"mean_ms"`
	MaxMS  float64 `json:"max_ms"`
}
