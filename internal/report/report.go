package report

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// SchemaVersion is the version of the JSON report schema. It changes
// whenever a field is renamed, removed or changes meaning; adding a field
// does not change it.
const SchemaVersion = 1

// Settings are the phase's configuration as the report shows it.
type Settings struct {
	Limits governor.Limits
	// Tick is how often the governor read the counters.
	Tick time.Duration
	// Governed is false for a baseline run at fixed load (the ceiling).
	Governed bool
	// EarlyBreach says the governor could close a window early on a gross
	// breach (governor.WithEarlyBreach); false is the seed's exact cadence.
	EarlyBreach bool
	// Evidence is the kinds of evidence beyond failed attempts the governor
	// read (governor.Evidence.String()); "" reads as "none".
	Evidence string
	// Target describes what was loaded: URLs, or the built-in target.
	Target string
	// Transport is the HTTP client a URL run's attempts, or a script's
	// plain http:// requests, went through (engine.Transport: "evloop",
	// "raw", "fasthttp", "net/http"); "" for other runs.
	Transport string
}

// Attempts counts resolved attempts (every try, retries included) by
// outcome class.
type Attempts struct {
	OK uint64
	// Failed attempts by class: connection refused, connection reset,
	// timeout, a 5xx status, a 429 status, anything else counted as failed,
	// ok answers slower than the latency budget (--slow), a host name that
	// did not resolve, a failed TLS handshake.
	Refused, Reset, Timeout, Status5xx, Status429, Other, Slow, DNS, TLS uint64
}

// Failed is the number of failed attempts of every class.
func (a Attempts) Failed() uint64 {
	return a.Refused + a.Reset + a.Timeout + a.Status5xx + a.Status429 + a.Other + a.Slow + a.DNS + a.TLS
}

// Generator is the load generator's watch of itself (engine.GeneratorSummary).
type Generator struct {
	// Ticks and SaturatedTicks count the watch's ticks, all and those in
	// which the generator, not the target, limited the load.
	Ticks, SaturatedTicks int
	// Rate is the attempts per second over the saturated ticks.
	Rate float64
	// Signals counts saturated ticks by rule (cpu, wait, lag, drop,
	// schedule).
	Signals map[string]int
	// MaxWait is the largest tick's 99th percentile of the time the
	// generator's goroutines waited to run (over agents: any one agent's).
	MaxWait time.Duration
	// MaxReadDelay is the largest tick's mean read delay (how long its
	// answers waited in the kernel for the generator to read them; over
	// agents: any one agent's).
	MaxReadDelay time.Duration
}

// Iterations counts finished iterations: OK after however many tries it
// took, or Failed when every try failed.
type Iterations struct {
	OK, Failed uint64
}

// Input is everything the engine knows at the end of a run.
type Input struct {
	Settings Settings
	// Windows are the closed windows in order (from governor.WithObserver).
	Windows []governor.Window
	// Start and End bound the run; End must not be before Start.
	Start, End time.Time
	// Interrupted is true when the run was stopped (Ctrl-C) before its
	// duration was up.
	Interrupted bool
	Attempts    Attempts
	Iterations  Iterations
	// Dropped counts arrivals that found no free worker (rate mode).
	Dropped uint64
	// Missed counts arrivals the schedule asked for that the generator
	// never made (rate mode; engine.Counts.Missed).
	Missed uint64
	// Aborted counts attempts cut off by the run's own stop (the grace
	// period after Ctrl-C ran out): neither ok nor failed.
	Aborted uint64
	// ReadDelay sums up how long answers waited in the kernel, after they
	// arrived, for the generator to read them (engine.Meter.ReadDelay):
	// N answers, Sum in all, the longest Max. N is 0 where no answer was
	// read with the kernel's receive stamps.
	ReadDelay struct {
		Sum, Max time.Duration
		N        uint64
	}
	// Latency is Recorder.Summary(); the zero value reports no latencies.
	Latency Latencies
	// Generator is the generator's watch of itself; the zero value says
	// it never saturated.
	Generator Generator
	// Earlier sums up the windows that closed before Windows (a phase
	// keeps only its newest KeepWindows).
	Earlier Earlier
	// Timeline, if set, holds every window as it closed (Spool): the CSV
	// timeline is written from it when Earlier.Windows > 0.
	Timeline *Spool
}

// Outcome names what a run found; it is the JSON report's "outcome".
type Outcome string

// The outcomes, one per verdict.
const (
	// OutcomeCapacity: settled windows below the ceiling measure the
	// capacity at the failure bound.
	OutcomeCapacity Outcome = "capacity"
	// OutcomeAtCeiling: the settled windows held at the ceiling; the
	// capacity is at least the ceiling.
	OutcomeAtCeiling Outcome = "at_ceiling"
	// OutcomeNeverSettled: the target failed above the bound even at the
	// floor.
	OutcomeNeverSettled Outcome = "never_settled"
	// OutcomeUnsettled: windows closed but the governor was still searching
	// (or moving) when the run ended.
	OutcomeUnsettled Outcome = "unsettled"
	// OutcomeNoLimit: windows settled, but nothing near their level showed
	// a limit: the offer was still climbing (every window clean) or only
	// latency within a busy host's noise held it. The verdict says "no limit
	// found up to X", never a capacity.
	OutcomeNoLimit Outcome = "no_limit"
	// OutcomeNoEvidence: no window gathered enough attempts to judge.
	OutcomeNoEvidence Outcome = "no_evidence"
	// OutcomeNoWindows: the run ended before any window closed.
	OutcomeNoWindows Outcome = "no_windows"
	// OutcomeNotGoverned: a baseline run at fixed load; no capacity claimed.
	OutcomeNotGoverned Outcome = "not_governed"
)

// ErrNoWindows is returned by the chart writers for a report without
// windows: there is nothing to draw.
var ErrNoWindows = errors.New("no closed windows to chart")

// Build turns a run's input into its report. It fails, naming the problem,
// on input no run could produce: invalid limits, End before Start.
func Build(in Input) (*Report, error) {
	l := in.Settings.Limits
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if in.End.Before(in.Start) {
		return nil, fmt.Errorf("run end %v is before its start %v", in.End, in.Start)
	}
	if in.Settings.Tick < 0 {
		return nil, fmt.Errorf("tick must be >= 0, got %v", in.Settings.Tick)
	}
	r := &Report{
		SchemaVersion: SchemaVersion,
		Settings: SettingsJSON{
			Mode:        l.Mode.String(),
			Unit:        offerUnit(l.Mode),
			Ceiling:     l.Ceiling,
			Floor:       l.Floor,
			Start:       l.Start,
			High:        l.High,
			Low:         l.Low,
			WindowS:     l.Window.Seconds(),
			TickS:       in.Settings.Tick.Seconds(),
			MinAttempts: l.MinAttempts,
			Governed:    in.Settings.Governed,
			EarlyBreach: in.Settings.EarlyBreach && in.Settings.Governed,
			Evidence:    evidenceName(in),
			Target:      in.Settings.Target,
			Transport:   in.Settings.Transport,
		},
		Run: Run{
			Start:       in.Start.UTC(),
			End:         in.End.UTC(),
			DurationS:   round(in.End.Sub(in.Start).Seconds(), 3),
			Interrupted: in.Interrupted,
		},
		Latency: LatencyJSON{
			AtCapacity: latencyJSON(in.Latency.AtCapacity),
			Overall:    latencyJSON(in.Latency.Overall),
			Clamped:    in.Latency.Clamped,
		},
		DroppedArrivals: in.Dropped,
		MissedArrivals:  in.Missed,
		AbortedAttempts: in.Aborted,
		ReadDelay:       readDelayJSON(in),
		Generator: GeneratorJSON{
			Saturated: in.Generator.SaturatedTicks > 0, SaturatedAtPerS: round(in.Generator.Rate, 3),
			SaturatedTicks: in.Generator.SaturatedTicks, Ticks: in.Generator.Ticks,
			Signals:   GeneratorSignals{CPU: in.Generator.Signals["cpu"], Wait: in.Generator.Signals["wait"], Read: in.Generator.Signals["read"], Lag: in.Generator.Signals["lag"], Schedule: in.Generator.Signals["schedule"], Drop: in.Generator.Signals["drop"]},
			MaxWaitMs: ms(in.Generator.MaxWait), MaxReadDelayMs: ms(in.Generator.MaxReadDelay),
		},
	}

	// Everything the report says about the capacity level — the estimate,
	// the latency at capacity, the windows flagged settled — rests on the
	// same windows: those governor.Steady picks, which Capacity uses.
	est := governor.Capacity(in.Windows, l.High)
	steady := governor.Steady(in.Windows, l.High)
	uncovered := 0
	if in.Latency.recorded {
		at, covered := steadyLatency(in.Windows, steady, in.Latency.bins)
		r.Latency.AtCapacity = latencyJSON(at)
		uncovered = len(steady) - covered
	}
	if !in.Settings.Governed {
		// A fixed-load baseline measures no capacity: its windows held at
		// the ceiling because nothing moved the offer, not because the
		// target took it cleanly. Keep only the saturation count.
		est = governor.Estimate{Saturated: est.Saturated}
		steady, uncovered = nil, 0
		r.Latency.AtCapacity = Percentiles{}
	}
	r.Capacity = CapacityJSON{
		Found:            est.Windows > 0,
		SettledWindows:   est.Windows,
		Offer:            round(est.Offer, 3),
		GoodputPerS:      round(est.Goodput, 3),
		ThroughputPerS:   round(est.Throughput, 3),
		AttemptFailFrac:  round(est.Frac, 6),
		AtCeiling:        est.Windows > 0 && est.AtCeiling,
		SaturatedWindows: est.Saturated + in.Earlier.Saturated,
	}

	a := in.Attempts
	failed := a.Failed()
	r.Attempts = AttemptsJSON{
		Total:    a.OK + failed,
		OK:       a.OK,
		Failed:   failed,
		FailFrac: round(frac(failed, a.OK+failed), 6),
		ByClass: ClassesJSON{
			Refused: a.Refused, Reset: a.Reset, Timeout: a.Timeout,
			Status5xx: a.Status5xx, Status429: a.Status429, Other: a.Other, Slow: a.Slow,
			DNS: a.DNS, TLS: a.TLS,
		},
	}
	it := in.Iterations
	r.Iterations = IterationsJSON{
		Total:  it.OK + it.Failed,
		OK:     it.OK,
		Failed: it.Failed,
		OKFrac: round(frac(it.OK, it.OK+it.Failed), 6),
	}

	r.Windows = windowRows(in, steady)
	r.EarlierWindows = in.Earlier.Windows
	for _, o := range in.Earlier.Outages {
		r.earlierOutages = append(r.earlierOutages, fmt.Sprintf("%.1f–%.1fs", o[0].Sub(in.Start).Seconds(), o[1].Sub(in.Start).Seconds()))
	}
	if in.Earlier.Windows > 0 && in.Timeline != nil {
		r.timeline = &timeline{spool: in.Timeline, in: in}
		if len(steady) > 0 {
			r.timeline.level = &in.Windows[steady[len(steady)-1]]
		}
	}
	r.Outcome, r.Verdict = verdict(in, est)
	if r.Capacity.Found {
		r.Capacity.HeldBy, _ = limit(in, est)
		if r.Capacity.AtCeiling {
			r.Capacity.HeldBy = ""
		}
	}
	if r.Outcome == OutcomeNoLimit {
		r.Capacity.Found = false // the figures stay: what the run measured, not a capacity
	}
	r.Notes = notes(in, r, uncovered)
	return r, nil
}

// evidenceName is the evidence the run's governor read: what its windows
// say they read (a host whose counters report no Load gives the governor
// nothing beyond failed attempts, whatever was asked), else the setting.
func evidenceName(in Input) string {
	if !in.Settings.Governed {
		return "none"
	}
	if in.Earlier.Windows > 0 {
		return in.Earlier.First.Read.String()
	}
	if len(in.Windows) > 0 {
		return in.Windows[0].Read.String()
	}
	if in.Settings.Evidence == "" {
		return "none"
	}
	return in.Settings.Evidence
}

// queuesFactor is the growth of p50 latency, from the run's first window
// to the windows the capacity rests on, past which a run whose goodput fell
// short of its offer is said to queue.
const queuesFactor = 4

// queues returns the p50 latency growth from the first window with latency
// to the steady windows when the target queued — latency grew at least
// queuesFactor-fold, and by more than governor.LatencyFloor, while goodput
// plateaued (rate mode: under 90 % of the offer; concurrency mode: latency
// alone says it) — and 0 otherwise. The floor is the governor's own: p50
// 0.2 → 1.1 ms on a loaded host is its jitter, not a queue.
func queues(in Input, est governor.Estimate) float64 {
	first, last := firstP50(in), in.Latency.AtCapacity.P50
	if first <= 0 || in.Latency.AtCapacity.Count == 0 || last-first <= governor.LatencyFloor {
		return 0
	}
	growth := float64(last) / float64(first)
	if growth < queuesFactor {
		return 0
	}
	if in.Settings.Limits.Mode == governor.Rate && est.Goodput >= 0.9*est.Offer {
		return 0
	}
	return growth
}

// firstP50 is the p50 latency of the first window that recorded any.
func firstP50(in Input) time.Duration {
	if in.Latency.FirstP50 > 0 {
		return in.Latency.FirstP50
	}
	for _, w := range in.Latency.Windows {
		if w.Count > 0 {
			return w.P50
		}
	}
	return 0
}

// dur prints a latency for a verdict: 11ms, 5.4s.
func dur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
	return d.Round(100 * time.Microsecond).String()
}

// verdict decides the outcome and says it in one line.
func verdict(in Input, est governor.Estimate) (Outcome, string) {
	l := in.Settings.Limits
	bound := "≤ " + pct(l.High) + " attempt failures"
	var o Outcome
	var v string
	switch {
	case !in.Settings.Governed:
		o = OutcomeNotGoverned
		secs := in.End.Sub(in.Start).Seconds()
		a := in.Attempts
		var tput, good float64
		if secs > 0 {
			tput = float64(a.OK+a.Failed()) / secs
			good = float64(a.OK) / secs
		}
		v = fmt.Sprintf("not governed: fixed load at the ceiling (%s) gave %s req/s, goodput %s req/s, %s attempt failures; a baseline, not a capacity",
			offer(l.Ceiling, l.Mode), num(tput), num(good), pct(frac(a.Failed(), a.OK+a.Failed())))
	case len(in.Windows) == 0:
		o = OutcomeNoWindows
		if in.Interrupted {
			v = "interrupted before any window closed: no capacity measured"
			break
		}
		v = fmt.Sprintf("ended before any window closed: no capacity measured (run longer than the %v window)", l.Window)
		if ran := in.End.Sub(in.Start); ran >= l.Window {
			// Long enough: what was short was answers, not time.
			v = fmt.Sprintf("ended before any window closed: no capacity measured (in %v no window resolved its %d attempts: the target answers too slowly, or not at all)",
				ran.Round(100*time.Millisecond), l.MinAttempts)
		}
	case est.Windows > 0 && queues(in, est) > 0:
		// Latency grew several-fold while goodput stayed below what was
		// asked: the target queues, and the offer it "held" is not a
		// capacity it showed. The plateau is.
		o = OutcomeCapacity
		v = fmt.Sprintf("the target queues: latency grew %s× (p50 %s at first, %s at the end) while goodput plateaued; capacity is the plateau, ≈ %s req/s (%s)",
			num(queues(in, est)), dur(firstP50(in)), dur(in.Latency.AtCapacity.P50), num(est.Goodput), plural(est.Windows, "settled window"))
	case est.Windows > 0 && est.AtCeiling:
		o = OutcomeAtCeiling
		v = fmt.Sprintf("held at the ceiling: capacity ≥ ceiling (%s; goodput %s req/s at %s, %s)",
			offer(l.Ceiling, l.Mode), num(est.Goodput), bound, plural(est.Windows, "settled window"))
	case est.Windows > 0 && noLimitFound(in, est):
		by, _ := limit(in, est)
		o, v = OutcomeNoLimit, noLimit(in, est, by)
	case est.Windows > 0 && l.Mode == governor.Concurrency:
		o = OutcomeCapacity
		v = fmt.Sprintf("capacity ≈ %s concurrent (goodput %s req/s) at %s (%s)",
			num(est.Offer), num(est.Goodput), bound, plural(est.Windows, "settled window"))
	case est.Windows > 0:
		o = OutcomeCapacity
		v = fmt.Sprintf("capacity ≈ %s req/s at %s (%s)", num(est.Goodput), bound, plural(est.Windows, "settled window"))
	default:
		o, v = unsettled(in)
	}
	if in.Interrupted && o != OutcomeNoWindows {
		v += " (interrupted)"
	}
	if in.Aborted > 0 {
		// The failure fraction is over resolved attempts: the ones the
		// stop cut off are neither, and a reader must see them beside it.
		v += fmt.Sprintf("; %s aborted in flight by the stop, neither ok nor failed", plural(int(in.Aborted), "attempt"))
	}
	return o, v
}

// noLimitFound reports whether a governed phase's settled windows measure
// no limit: nothing near their level was damaged (still climbing), or only
// latency within a busy host's noise was (see limit). A hold at the ceiling
// is its own verdict.
func noLimitFound(in Input, est governor.Estimate) bool {
	by, weak := limit(in, est)
	return by == "" || weak
}

// unsettled explains a run whose windows never settled.
func unsettled(in Input) (Outcome, string) {
	l := in.Settings.Limits
	var judged []governor.Window
	for _, w := range in.Windows {
		if w.Decision.Signal != governor.SignalNoEvidence {
			judged = append(judged, w)
		}
	}
	if len(judged) == 0 {
		return OutcomeNoEvidence, fmt.Sprintf("no evidence: no window resolved %d attempts even in 4 × %v (the target answers too slowly for the offer, or too few workers)",
			l.MinAttempts, l.Window)
	}
	last := judged[len(judged)-1]
	if last.Offer <= l.Floor && last.Frac > l.High {
		// The fraction is of what decided the window: failed attempts, or
		// (By) other evidence — arrivals unserved by a target that never
		// answers are no "attempt failures".
		what := "attempt failures"
		if last.By == "unserved" {
			what = "of arrivals unserved"
		}
		return OutcomeNeverSettled, fmt.Sprintf("never settled: target failed even at the floor (%s: %s %s)",
			offer(l.Floor, l.Mode), pct(last.Frac), what)
	}
	if climbing(last.Decision.Signal) {
		return OutcomeUnsettled, fmt.Sprintf("still climbing: no limit found up to %s (the last window, at %s, was clean: %s); run longer",
			offer(max(highestClean(in), last.Offer), l.Mode), offer(last.Offer, l.Mode), last.Decision.Signal)
	}
	return OutcomeUnsettled, fmt.Sprintf("not settled: still searching when the run ended (last window at %s, %s); run longer",
		offer(last.Offer, l.Mode), last.Decision.Signal)
}

// notes are the caveats a reader should not miss. Saturated windows are not
// among them: the report always shows them (capacity.saturated_windows, the
// windows' flags, a line of the text report). uncovered counts the steady
// windows the latency at capacity lacks.
func notes(in Input, r *Report, uncovered int) []string {
	out := []string{} // [] in JSON, never null
	l := in.Settings.Limits
	if g := in.Generator; g.SaturatedTicks > 0 {
		out = append(out, fmt.Sprintf("generator saturated at %s/s (%d of %d watch ticks: %s): figures at that load are the generator's, not the target's",
			num(g.Rate), g.SaturatedTicks, g.Ticks, signalCounts(g.Signals)))
	}
	if in.Dropped > 0 {
		out = append(out, fmt.Sprintf("%d arrivals dropped: no free worker when due (the worker bound limited the load)", in.Dropped))
	}
	if in.Missed > 0 {
		out = append(out, fmt.Sprintf("%d arrivals missed: the generator fell behind the schedule and never made them (neither sent nor dropped); the load asked for was not the load sent", in.Missed))
	}
	if k := floorFailures(in.Windows, l); k > 0 && r.Capacity.Found {
		out = append(out, fmt.Sprintf("the last %s failed above the bound at the floor: the target may have gone down after the capacity was measured",
			plural(k, "window")))
	}
	if gap := r.Iterations.OKFrac - (1 - r.Attempts.FailFrac); r.Iterations.Total > 0 && r.Attempts.Total > 0 && gap > 0.01 {
		out = append(out, fmt.Sprintf("retries hide failures: %s of iterations ok after tries, but %s of attempts failed",
			pct(r.Iterations.OKFrac), pct(r.Attempts.FailFrac)))
	}
	if n := r.Capacity.SettledWindows; uncovered > 0 {
		out = append(out, fmt.Sprintf("latency at capacity covers %d of the %d settled windows: the recorder kept no histogram of the others (past its memory budget it drops the histograms of the offers least recently settled at, and it keeps none for windows it did not see settled)",
			n-uncovered, n))
	}
	if in.Latency.Clamped > 0 {
		out = append(out, fmt.Sprintf("%d latencies over one hour recorded as one hour", in.Latency.Clamped))
	}
	if e := in.Earlier.Windows; e > 0 {
		out = append(out, fmt.Sprintf("windows[] lists the newest %d of the run's %d windows (the timeline file lists every one); the capacity rests on them", len(in.Windows), e+len(in.Windows)))
	}
	return out
}

// floorFailures counts the trailing windows judged at the floor above the
// bound.
func floorFailures(ws []governor.Window, l governor.Limits) int {
	k := 0
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if w.Decision.Signal == governor.SignalNoEvidence {
			continue
		}
		if w.Offer > l.Floor || w.Frac <= l.High {
			break
		}
		k++
	}
	return k
}

func offerUnit(m governor.Mode) string {
	if m == governor.Concurrency {
		return "concurrent iterations"
	}
	return "iterations/s"
}

// offer prints an offer with its unit: "800/s" or "16 concurrent".
func offer(v float64, m governor.Mode) string {
	if m == governor.Concurrency {
		return num(v) + " concurrent"
	}
	return num(v) + "/s"
}

func frac(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// readDelayJSON is the "read_delay" object: zero when no answer was
// stamped.
func readDelayJSON(in Input) ReadDelayJSON {
	d := in.ReadDelay
	if d.N == 0 {
		return ReadDelayJSON{}
	}
	return ReadDelayJSON{Answers: d.N, MeanMS: ms(d.Sum / time.Duration(d.N)), MaxMS: ms(d.Max)}
}
