// Package governor is throttle's adaptive backpressure governor: it decides
// how much load a target gets, from the evidence of how the target is coping.
//
// A load test against a saturated target lies: retries absorb the server's
// rejections and ok % stays green. The governor looks through retries at the
// attempt plane: every try at the target resolves as ok or failed, a host
// counts them cumulatively (Counters), and the governor judges each window
// on the attempt-failure fraction frac = Δfailed / (Δok + Δfailed).
//
// # The rules
//
// Decide and MemoryClearStep (rules.go) are the seed's rules, pure:
//
//   - Slow start. The offer begins at Limits.Start (default: the floor) and
//     doubles every clean window (frac <= Low) while no congestion has been
//     seen. The authored value is the ceiling, not the opening offer.
//   - Severity-proportional back-off. frac > High multiplies the offer by
//     clamp(1 − frac, 0.25, 0.9), never below the floor, and remembers the
//     offer as last-bad.
//   - Dead band. Low < frac <= High holds.
//   - The verdict (verdict.go). Each read gathers the window's evidence into
//     one value and one function, judge, returns the verdict; a hold names
//     its reason in its signal: dead-band, latency, no-evidence,
//     generator-saturated or outage.
//   - Congestion memory. With last-bad known, clean windows climb ×1.5 up to
//     0.75 × last-bad, then probe additively by max(1, 2 % of last-bad).
//     MemoryClearStreak consecutive clean windows at or above last-bad clear
//     the memory and restore the doubling.
//   - A rule that would cross the ceiling or floor holds there, naming it.
//
// In concurrency mode offers are whole numbers: increases round up,
// decreases round down.
//
// # The loop
//
// Governor does the bookkeeping around the rules. A window is judged only on
// evidence gathered entirely at the committed offer, at least
// Limits.MinAttempts resolved attempts over at least Limits.Window (a clean
// climb needs less: see "Evidence at low attempt rates"); a window still
// short at 4 × Window reports a no-evidence hold, which resets the memory
// streak but discards no evidence: the window goes on collecting, so even an
// offer of 1/s is judged once it has its attempts. Decisions travel on the
// push-on-set control path (Control): the governor's Set never blocks its
// loop, the Applier (a gate.Gate) applies the value and the Control confirms
// what was actually applied. The committed offer is the last confirmed value,
// and every confirmation restarts the window from a fresh counter snapshot
// once a settle span (WithSettle, one tick by default) has passed: answers
// arriving right after a change belong to the old offer (after a raise, with
// the quick climb on, nothing is discarded: those answers were sent at a
// lower offer and can only make the new one look cleaner). A write of another
// origin (OriginUser) is adopted the same way.
//
// # Cadence
//
// A window covers its declared length from its own start: Run schedules its
// reads of the counters from each confirmation, and a read within half a
// read of the window's end closes it (Window.End − Window.Start is what it
// covered). A change costs one settle span, no more. The tick defaults to
// DefaultTickFor(window) = min(1 s, window/5). Run reads the counters once a
// tick, or five times a tick while the early breach is on (Check).
//
// Early breach (WithEarlyBreach, on by default): at a read inside a window,
// when the evidence shows a failure fraction above High with confidence (an
// exact binomial test: so much damage would be less likely than the test's
// level at a true fraction of High), the window closes at once and the
// seed's back-off applies to that fraction; Window.Early and the movement
// line (early=true) say so. The evidence must hold MinAttempts attempts and
// either 5 × MinAttempts of them or a whole tick: a busy target is judged a
// fifth of a tick in, where an overshoot at twice its capacity costs a fifth
// of what a whole tick did, and a slow one waits for a tick, so that its
// back-off is not taken on a handful of attempts. The level is corrected
// for the looks a window takes (two a read, see earlyLevel): a window whose
// true fraction is at High is cut short less than 1 % of the time however
// often it is read.
//
// The test looks at two stretches of the window, both gathered at the
// committed offer: first its tail (the evidence since the newest earlier
// read that leaves enough of it), then the window so far. When the tail
// breaches and the evidence before it did not, the tail's fraction is the
// one the back-off applies to (Window.Tail, tail=… in the movement line): a
// target that changed inside the window shows the change in the tail,
// while the window so far dilutes it with the clean evidence from before,
// and a back-off on the diluted fraction is too shallow, sets last-bad too
// high and is followed by a second breach. When the evidence before the tail
// breached too, nothing changed: the window's own fraction, on more
// evidence, is the one used. The read that closes a full window judges its
// tail the same way first. Dead-band, probe and memory-clear decisions, and
// a breach at the floor, wait for the full window. Off gives the seed's
// exact cadence: one read a tick, no tail, no early close.
//
// # Evidence at low attempt rates
//
// A closed loop with think time makes few attempts for its offer (N VUs
// sleeping a second between requests make about N a second), and an offer
// near the floor makes few at any mode: at 1/s a window of 20 attempts lasts
// 20 s, and slow start from the floor to 3000/s took minutes. No confidence
// bound helps there: to show with confidence that a fraction is at or below
// Low takes hundreds of clean attempts, and even a breach needs a dozen. What
// a doubling at a low offer risks is small and bounded, though: it can only
// overshoot to twice an offer whose every attempt succeeded, and the early
// breach sees the overshoot. So the evidence a window needs follows the
// decision it takes (WithQuickClimb, on by default):
//
//   - A clean multiplicative climb (slow start, or a safe climb that stays
//     below 0.75 × last-bad) is decided at the first read at least a tick
//     into the window (two ticks in concurrency mode; never less than a
//     fifth of the window a tick, however fine the tick, nor more than the
//     window) once the window holds a tick's worth of attempts at the offer
//     (one at 1/s, at most MinAttempts) and no damage at all: no failed
//     attempt, no unserved load, and latency within the noise against the
//     baseline, which a quick window's own latency helps set. A window with
//     any damage waits for its full length, as the seed has it.
//   - Probes, dead-band holds, the memory-clear streak and back-offs on
//     the full window keep the seed's evidence: Window and MinAttempts.
//   - A full window short of MinAttempts is judged on a breach beyond doubt:
//     the early breach's exact binomial test at its level (4 failures in 5
//     are a breach, 1 in 5 is not). In concurrency mode the early breach
//     uses that test inside the window too: a closed loop's overshoot is
//     otherwise seen only after a tick.
//   - After a raise no settle span is spent.
//   - An overshoot is met in one back-off where the evidence allows. A
//     limiter with a burst allowance (nginx's limit_req burst=) lets a
//     smooth excess through until the allowance is spent (128 VUs thinking
//     a second, 28 req/s over a 100 r/s limit with burst=100: 3.6 s, longer
//     than a quick window), then refuses all of it; the doubling after it
//     sees a clean read, then most attempts refused. In the window after a
//     multiplicative climb the back-off takes the fraction since the damage
//     began when it is larger (onsetFrac); the window right after a
//     back-off breaches on 2 × MinAttempts (the target has just shown
//     overload). In concurrency mode the test on fewer than MinAttempts
//     judges only windows that stay short of evidence or follow a climb: a
//     lump of refusals in the first read near the limit is not a breach.
//
// The climb from 1/s to 3000/s then takes twelve one-tick windows (12 s, a
// robust nginx measured the same). The price is fewer clean attempts before
// a doubling that overshoots: the failed share of the attempts before
// settling, docs/design.md §5's early-breach bar (≤ 8 %), holds from about 100
// attempts a second at the capacity (the simulator's closed-loop bars, and
// every model at c = 1000 and 1300), but at 20 to 50 requests a second it
// reaches 10 to 14 % (a handful of requests: 14 of 100 at 20/s); over every
// rate-mode capacity from 20 to 9000 the median is 3 % and the worst 20 %
// (at the smallest c), against the seed cadence's 10.5 % and 20.7 %. In
// seconds of capacity lost before settling it is cheaper than the seed's
// cadence everywhere (median 0.07 s against 1.5 s). Off gives the seed's
// cadence: every window lasts Window and holds MinAttempts.
//
// # Evidence beyond failed attempts
//
// Targets that queue answer overload with latency, not errors. When the
// host's Counters also implement LoadCounters, a window reads more evidence
// (WithEvidence; each kind can be switched off, EvidenceNone is the seed's
// rule exactly):
//
//   - Unserved load (rate mode). Arrivals dropped for want of a worker and
//     the growth of in-flight attempts over the window are load the target
//     was offered and did not serve: the window's fraction is
//     (failed + unserved) / (resolved + unserved). Growth within
//     1 + offer × the baseline latency is in flight's own jitter and does
//     not count. A target that sheds
//     above capacity c shows the shed model's (x − c)/x through failures; a
//     target that queues shows the same fraction through unserved load,
//     before a single request fails.
//   - Latency knee (concurrency mode). In a closed loop more in flight than
//     the target serves at once only waits: by Little's law throughput is
//     N/(R + Z), R the response time and Z the think time, so when R grows
//     in proportion to N, goodput is flat. The rule compares a window's
//     mean attempt latency (the request's response time, never the
//     iteration's, which holds the think time) with the run's low-load
//     baseline (the lowest mean of any window with evidence whose failures
//     stayed at or below High) and reads the excess e through Little's law:
//     the loop turns every offer × span / resolved (R + Z, measured, so Z
//     need not be known), and q = e/(R + Z) is the share of the in-flight
//     iterations that only wait (Window.Waiting). Without think time q is
//     1 − 1/I, I the inflation R/baseline. Written as the cycle's own
//     inflation I' = 1/(1 − q): up to 1.25 is noise; up to 1.5 the target
//     has begun to queue and the window holds, with signal SignalLatency
//     (unless its failures alone already hold it in the dead band or
//     breach; the window keeps its own fraction); above 1.5, q is
//     the window's damage fraction, so the seed's back-off takes the offer
//     to the knee's estimate (never below a quarter, as the seed clamps
//     it). An excess under a millisecond is never damage: a sub-millisecond
//     answer moving by a tenth of a millisecond (p50 0.18 → 0.28 ms,
//     inflation 1.5) is a busy host's jitter, and with a second of think
//     time even a 10 ms excess is a hundredth of the cycle. The offer then probes from the knee, holds once latency
//     inflates by a quarter and backs off at a half, so it settles within
//     1.5 × the knee in flight, at the plateau's goodput. In rate mode the
//     same rule catches what in-flight growth cannot: the standing queue an
//     overshoot built and a back-off to just under capacity never drains
//     (BBR drains the queue it built for the same reason). There it counts
//     only from 4× the baseline and when the mean latency exceeds the
//     baseline by more than a tenth of a tick, so a stalled generator or a
//     target answering in a millisecond on a busy host is not taken for a
//     queue. Nor is a queue that shrank over the window (in flight fell):
//     it is draining, so the offer is below what the target serves. Its
//     damage fraction there is q = e/(e + span), e the excess latency and
//     span the window's length (by Little's law the queue holds about
//     offer × e attempts against the offer × span the window offered: q is
//     the share of the load that only waits), capped at 10 %, the seed's
//     smallest trim: a standing queue needs the offer below capacity to
//     drain, its depth says how long that takes, not how far the offer is
//     above capacity (unserved load measures that), and the windows that
//     see it drain are not judged on it. (1 − 1/I would be at least 3/4
//     from 4× on and quarter the offer for any standing queue: on a target
//     that queues, the seed's probes then took a dozen windows to climb
//     back from 3/4 of last-bad; the built-in backlog demo reported 6–7 %
//     under its capacity and the simulated backlog model saw-toothed
//     between c/4 and c without settling.)
//   - Drain. After a back-off, the next window starts only once the
//     attempts started before the change have resolved (at most one window
//     after the settle span): a backlog the target is still working off is
//     not the new offer's fault. Window.Drained says how long it waited.
//   - Generator saturation. When the host says it is saturated
//     (Load.GeneratorSaturated) at any tick of a window, the window's
//     unserved load is the host's shortfall, not the target's damage: the
//     window holds with signal generator-saturated unless its failed
//     attempts alone breach.
//
// Window.By names the evidence that decided a window when it was not failed
// attempts alone ("unserved", "latency", "generator"); the movement line
// shows it (by=...) with the figures (unserved, dropped, queued, latency,
// inflation, drained).
//
// Time is a parameter: Run drives the governor from a clock.Clock ticker, and
// Tick and Confirm take the time explicitly, so tests and simulations run
// exactly and fast.
//
// # Visible, never silent
//
// Every movement logs one line (log/slog, info) naming its signal; holds log
// at debug. Each closed window is handed to WithObserver as a Window record.
//
// # Measurement honesty
//
// Capacity turns the windows into the capacity at the failure bound: goodput
// over the steady windows (Steady: at or below High, judged near the
// congestion point, at the level the phase settled at). Windows above High
// are saturation artifacts, counted and excluded. Tally is the cumulative
// attempt counter a host feeds.
package governor
