// Package sim is a deterministic, discrete-time simulator of load controllers
// against model targets. It exists to check, exactly and in milliseconds, that
// the governor meets the bars docs/design.md §5 derives from the seed's rules, and
// to compare it fairly with the controllers a user would otherwise pick.
//
// A run advances simulated time in ticks (1 s by default). On every tick the
// Target serves the attempts offered during the tick at the offer in force,
// the run adds them to cumulative attempt counters (the same ok/failed
// counters a real host keeps), and the Controller reads those counters and
// says which offer applies until the next tick. Nothing sleeps and nothing
// runs concurrently, so a run with the same inputs and seed always gives the
// same windows.
//
// Targets are models of a system under test: Robust, Shed, Collapse, Queue,
// Backlog (a thread-pool server with a deep queue: overload answered with
// latency, not errors, optionally with a client timeout that leaves zombie
// work behind), ClosedLoop (VUs with think time against a server that sheds
// or queues: the offer counts VUs, and N of them send N/(R + think)
// requests a second), LimitedLoop (VUs with think time against a
// token-bucket limiter with a burst allowance, nginx's limit_req: the VUs'
// phases are followed, since a limiter with a burst answers a smooth excess
// and a cohort differently), and the wrappers Switch (capacity changes mid-run), Noisy (a
// background failure rate) and Dead (every attempt fails for a span). A
// LoadTarget (Backlog) also reports what a host counts beyond resolved
// attempts — started, dropped, summed latency — and Run hands it to the
// controller as governor.LoadCounters. A Target returns
// expected attempt counts; the run turns them into whole attempts either
// exactly (deterministic rounding that carries the remainder) or with
// binomial sampling noise on the failures (WithNoise).
//
// Controllers are the governor itself (NewGovernor, driven through its
// exported Tick and Confirm with explicit times and an Applier that may
// confirm another value than asked) and three baselines: AIMD, a linear ramp
// to failure and fixed load at the ceiling. Every controller judges windows
// by the seed's rule (at least Limits.Window long and Limits.MinAttempts
// resolved attempts, or a no-evidence hold at 4 × Window), the governor
// except where its quick climb decides a clean climb sooner (the decisions
// are the same, only the time they take differs; NewSeedGovernor has it
// off), and records them as governor.Window values, so one set of metrics
// (Assess) measures them all.
package sim
