package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/throttlekit/throttle/governor"
)

func build(t *testing.T, in Input) *Report {
	t.Helper()
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The report of a governed run against a shedding target of 800 req/s finds
// 800 req/s from the settled windows and flags the overshoots.
func TestBuildFindsTheCapacity(t *testing.T) {
	in := demoRun().run(t)
	r := build(t, in)
	if r.Outcome != OutcomeCapacity || !r.Capacity.Found {
		t.Fatalf("outcome %q: %s", r.Outcome, r.Verdict)
	}
	if math.Abs(r.Capacity.GoodputPerS-800)/800 > 0.05 {
		t.Errorf("capacity %v req/s, want 800 ± 5 %%", r.Capacity.GoodputPerS)
	}
	if r.Capacity.AttemptFailFrac > in.Settings.Limits.High {
		t.Errorf("capacity rests on windows failing %v", r.Capacity.AttemptFailFrac)
	}
	if want := "capacity ≈ 800 req/s at ≤ 5 % attempt failures ("; !strings.HasPrefix(r.Verdict, want) {
		t.Errorf("verdict %q, want it to start %q", r.Verdict, want)
	}
	est := governor.Capacity(in.Windows, in.Settings.Limits.High)
	if r.Capacity.SettledWindows != est.Windows || r.Capacity.SaturatedWindows != est.Saturated || est.Saturated == 0 {
		t.Errorf("capacity %+v, governor.Capacity %+v", r.Capacity, est)
	}
	steady := map[int]bool{}
	for _, i := range governor.Steady(in.Windows, 0.05) {
		steady[i] = true
	}
	saturated := 0
	for i, w := range r.Windows {
		src := in.Windows[i]
		if w.Saturated != (src.Frac > 0.05) || w.Settled != steady[i] {
			t.Errorf("window %d flags: %+v", i, w)
		}
		if w.Saturated {
			saturated++
			if w.Settled {
				t.Errorf("window %d is both saturated and settled", i)
			}
		}
		if w.Signal != src.Decision.Signal.String() || w.OK != src.OK || w.Failed != src.Failed || w.Early != src.Early {
			t.Errorf("window %d does not match its source: %+v", i, w)
		}
	}
	if saturated != r.Capacity.SaturatedWindows {
		t.Errorf("%d windows flagged saturated, capacity says %d", saturated, r.Capacity.SaturatedWindows)
	}
	// Latency at capacity comes from the settled windows only: in this run
	// they shed a little, so their served attempts take 5.5–7.5 ms, while the
	// search windows below capacity answered in 4–6 ms.
	var settledAttempts int64
	for _, w := range r.Windows {
		if w.Settled {
			settledAttempts += int64(w.OK + w.Failed)
		}
	}
	if at := r.Latency.AtCapacity; at.Count != settledAttempts || at.P50Ms < 5.5 || at.MaxMs > 7.6 {
		t.Errorf("latency at capacity %+v, want %d attempts with p50 in 5.5–7.5 ms", at, settledAttempts)
	}
	if r.Latency.Overall.Count != int64(r.Attempts.Total) {
		t.Errorf("overall latency counts %d attempts of %d", r.Latency.Overall.Count, r.Attempts.Total)
	}
	if r.Attempts.ByClass.Status5xx != r.Attempts.Failed || r.Attempts.Total != r.Attempts.OK+r.Attempts.Failed {
		t.Errorf("attempts %+v", r.Attempts)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes %q, want none for a clean run", r.Notes)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	// The slow start's overshoot to 1600/s was decided at the first tick of
	// its 2 s window (early breach): the window covered 0.5 s. The quick
	// climb got there from 50/s in five half-second windows.
	if !strings.Contains(text.String(), "saturated    3 windows excluded (attempt failures > 5 %): 2.5–3.0 s at 1600/s (50 %)") ||
		!strings.Contains(text.String(), "3 closed early by a gross breach") {
		t.Errorf("text report does not flag the saturated windows:\n%s", text.String())
	}
}

// An early dead-band hold at offer 1 is settled (one failure in 20) but far
// below the level the phase settled at, so the capacity excludes it; its
// slow attempts must not leak into the latency at capacity, nor its flag
// into the timeline.
func TestLatencyAtCapacityIsTheSteadyWindows(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 1000)
	rec, err := NewRecorder(l.High)
	if err != nil {
		t.Fatal(err)
	}
	ws := []governor.Window{
		window(0, 1, 19, 1, governor.SignalDeadBand), // settled, far below
		window(1, 2, 20, 0, governor.SignalSlowStart),
		window(2, 800, 800, 0, governor.SignalProbe),
		window(3, 820, 800, 20, governor.SignalDeadBand),
		window(4, 810, 805, 5, governor.SignalProbe),
	}
	if !governor.Settled(ws[0], l.High) {
		t.Fatal("window 0 must be settled by governor.Settled for this test to mean anything")
	}
	lat := []time.Duration{900 * time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 6 * time.Millisecond, 5 * time.Millisecond}
	for i, w := range ws {
		for n := uint64(0); n < w.OK+w.Failed; n++ {
			rec.Record(lat[i])
		}
		rec.Observe(w)
	}
	in := Input{
		Settings: Settings{Limits: l, Tick: time.Second, Governed: true},
		Windows:  ws,
		Start:    t0,
		End:      t0.Add(5 * time.Second),
		Attempts: Attempts{OK: 2444, Status5xx: 26},
		Latency:  rec.Summary(),
	}
	const steadyAttempts = 800 + 820 + 810
	if at := in.Latency.AtCapacity; at.Count != steadyAttempts || !near(at.Max, 6*time.Millisecond) {
		t.Errorf("Summary latency at capacity %+v, want the %d attempts of windows 2–4, at most 6 ms", at, steadyAttempts)
	}
	r := build(t, in)
	est := governor.Capacity(ws, l.High)
	if est.Windows != 3 || r.Capacity.SettledWindows != est.Windows || !strings.Contains(r.Verdict, "(3 settled windows)") {
		t.Fatalf("capacity %+v, verdict %q; governor.Capacity %+v", r.Capacity, r.Verdict, est)
	}
	if at := r.Latency.AtCapacity; at.Count != steadyAttempts || at.MaxMs > 6.01 || at.P50Ms < 4.99 {
		t.Errorf("report latency at capacity %+v, want the %d attempts of 5–6 ms", at, steadyAttempts)
	}
	var flagged []int
	for i, w := range r.Windows {
		if w.Settled {
			flagged = append(flagged, i)
		}
	}
	if fmt.Sprint(flagged) != "[2 3 4]" {
		t.Errorf("windows flagged settled %v, want [2 3 4]", flagged)
	}
	var csvOut strings.Builder
	if err := r.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "settled")
	for i, row := range rows[1:] {
		if want := strconv.FormatBool(i >= 2); row[col] != want {
			t.Errorf("CSV row %d settled = %s, want %s", i, row[col], want)
		}
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes %q, want none", r.Notes)
	}

	// Build takes the steady windows from its own Input: handed only the
	// windows before the capacity level, it finds the hold at offer 1 the
	// level and takes its latency, not Summary's.
	early := in
	early.Windows = ws[:2]
	r = build(t, early)
	if at := r.Latency.AtCapacity; at.Count != 20 || at.P50Ms < 899 {
		t.Errorf("latency at capacity over windows 0–1 %+v, want the 20 attempts of window 0", at)
	}
}

// A target whose capacity doubles mid-run: the windows settled at the old
// level are not the capacity's, so neither their flags nor their attempts'
// latencies count at capacity.
func TestLatencyAtCapacityAfterACapacityChange(t *testing.T) {
	s := demoRun()
	s.seconds = 120
	s.capacityAt = func(sec int) float64 {
		if sec < 50 {
			return 400
		}
		return 800
	}
	in := s.run(t)
	r := build(t, in)
	if math.Abs(r.Capacity.GoodputPerS-800)/800 > 0.05 {
		t.Fatalf("capacity %v req/s, want the new level 800 ± 5 %%", r.Capacity.GoodputPerS)
	}
	settled, flagged := 0, 0
	var attempts int64
	for i, w := range r.Windows {
		if governor.Settled(in.Windows[i], in.Settings.Limits.High) {
			settled++
		}
		if w.Settled {
			flagged++
			attempts += int64(w.OK + w.Failed)
			if math.Abs(w.Offer-800)/800 > 0.2 {
				t.Errorf("window %d at offer %v flagged settled", i, w.Offer)
			}
		}
	}
	if settled <= flagged {
		t.Fatalf("%d windows settled and %d flagged: the run never settled at the old level, so this test shows nothing", settled, flagged)
	}
	if flagged != r.Capacity.SettledWindows || r.Latency.AtCapacity.Count != attempts {
		t.Errorf("%d windows flagged, capacity on %d; latency at capacity counts %d attempts, the flagged windows hold %d",
			flagged, r.Capacity.SettledWindows, r.Latency.AtCapacity.Count, attempts)
	}
}

// Past its budget the Recorder drops the oldest window histograms, and the
// report says how many settled windows its latency at capacity covers.
func TestRecorderWindowBudget(t *testing.T) {
	if _, err := NewRecorder(0.05, WithWindowBudget(-1)); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("negative budget: error %v", err)
	}
	l := governor.NewLimits(governor.Rate, 1000)
	ws := []governor.Window{
		window(0, 800, 800, 0, governor.SignalProbe),
		window(1, 820, 800, 20, governor.SignalDeadBand),
		window(2, 810, 805, 5, governor.SignalProbe),
	}
	for _, tc := range []struct {
		name    string
		windows int // how many window histograms the budget holds
		covered int64
		note    string
	}{
		{"all kept", 3, 800 + 820 + 810, ""},
		{"newest two kept", 2, 820 + 810, "latency at capacity covers 2 of the 3 settled windows"},
		{"none kept", 0, 0, "latency at capacity covers 0 of the 3 settled windows"},
	} {
		// Every window holds some 800 attempts of one latency: its histogram
		// has one bucket with a two-byte count, so they are all this size.
		one := hdr.NewPacked(histLowest, histHighest, histDigits)
		_ = one.RecordValues(5000, 800)
		one.Compact()
		rec, err := NewRecorder(l.High, WithWindowBudget(tc.windows*one.GetMemorySize()))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range ws {
			for n := uint64(0); n < w.OK+w.Failed; n++ {
				rec.Record(time.Duration(5+i) * time.Millisecond)
			}
			rec.Observe(w)
		}
		r := build(t, Input{
			Settings: Settings{Limits: l, Governed: true},
			Windows:  ws,
			Start:    t0,
			End:      t0.Add(3 * time.Second),
			Latency:  rec.Summary(),
		})
		if r.Latency.AtCapacity.Count != tc.covered || r.Capacity.SettledWindows != 3 || r.Latency.Overall.Count != 2430 {
			t.Errorf("%s: latency %+v, capacity %+v", tc.name, r.Latency, r.Capacity)
		}
		if notes := strings.Join(r.Notes, "\n"); (tc.note == "") != (notes == "") || !strings.Contains(notes, tc.note) {
			t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.note)
		}
	}
}

func TestBuildOutcomes(t *testing.T) {
	rate := governor.NewLimits(governor.Rate, 1000)
	conc := governor.NewLimits(governor.Concurrency, 64)
	conc.Start = 4
	settled := []governor.Window{
		window(0, 100, 100, 0, governor.SignalSlowStart),
		window(1, 200, 150, 50, governor.SignalBackoff),
		window(2, 150, 150, 0, governor.SignalSafeClimb),
		window(3, 154, 154, 0, governor.SignalProbe),
		window(4, 158, 155, 3, governor.SignalDeadBand),
	}
	atCeiling := []governor.Window{window(0, 1000, 1000, 0, governor.SignalAtCeiling), window(1, 1000, 1000, 0, governor.SignalAtCeiling)}
	atFloor := []governor.Window{window(0, 1, 0, 20, governor.SignalAtFloor), window(1, 1, 0, 20, governor.SignalAtFloor)}
	searching := []governor.Window{window(0, 1, 20, 0, governor.SignalSlowStart), window(1, 2, 40, 0, governor.SignalSlowStart)}
	noEvidence := []governor.Window{window(0, 1, 3, 0, governor.SignalNoEvidence)}
	concWindows := []governor.Window{window(0, 16, 800, 0, governor.SignalProbe), window(1, 17, 840, 4, governor.SignalDeadBand)}

	cases := []struct {
		name        string
		limits      governor.Limits
		windows     []governor.Window
		governed    bool
		interrupted bool
		outcome     Outcome
		verdict     string
	}{
		{"capacity", rate, settled, true, false, OutcomeCapacity, "capacity ≈ 155 req/s at ≤ 5 % attempt failures (2 settled windows)"},
		{"capacity, interrupted", rate, settled, true, true, OutcomeCapacity, "capacity ≈ 155 req/s at ≤ 5 % attempt failures (2 settled windows) (interrupted)"},
		{"concurrency", conc, concWindows, true, false, OutcomeCapacity, "capacity ≈ 16.5 concurrent (goodput 820 req/s) at ≤ 5 % attempt failures (2 settled windows)"},
		{"at ceiling", rate, atCeiling, true, false, OutcomeAtCeiling, "held at the ceiling: capacity ≥ ceiling (1000/s; goodput 1000 req/s at ≤ 5 % attempt failures, 2 settled windows)"},
		{"never settled", rate, atFloor, true, false, OutcomeNeverSettled, "never settled: target failed even at the floor (1/s: 100 % attempt failures)"},
		{"still climbing", rate, searching, true, false, OutcomeUnsettled, "still climbing: no limit found up to 2/s (the last window, at 2/s, was clean: slow-start); run longer"},
		{"no evidence", rate, noEvidence, true, false, OutcomeNoEvidence, "no evidence: no window resolved 20 attempts even in 4 × 5s"},
		{"no windows", rate, nil, true, false, OutcomeNoWindows, "ended before any window closed: no capacity measured (in 10s no window resolved its 20 attempts: the target answers too slowly, or not at all)"},
		{"interrupted early", rate, nil, true, true, OutcomeNoWindows, "interrupted before any window closed: no capacity measured"},
		{"not governed", rate, nil, false, false, OutcomeNotGoverned, "not governed: fixed load at the ceiling (1000/s) gave 1000 req/s, goodput 950 req/s, 5 % attempt failures; a baseline, not a capacity"},
	}
	for _, tc := range cases {
		in := Input{
			Settings:    Settings{Limits: tc.limits, Tick: time.Second, Governed: tc.governed},
			Windows:     tc.windows,
			Start:       t0,
			End:         t0.Add(10 * time.Second),
			Interrupted: tc.interrupted,
			Attempts:    Attempts{OK: 9500, Status5xx: 500},
		}
		r := build(t, in)
		if r.Outcome != tc.outcome || !strings.HasPrefix(r.Verdict, tc.verdict) {
			t.Errorf("%s: %q %q\nwant %q %q", tc.name, r.Outcome, r.Verdict, tc.outcome, tc.verdict)
		}
		if r.Run.Interrupted != tc.interrupted || r.Settings.Governed != tc.governed {
			t.Errorf("%s: run %+v settings %+v", tc.name, r.Run, r.Settings)
		}
	}
}

// A fixed-load baseline claims no capacity even though its windows held at
// the ceiling cleanly.
func TestBuildNotGovernedClaimsNoCapacity(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 100)
	ws := []governor.Window{window(0, 100, 100, 0, governor.SignalAtCeiling), window(1, 100, 80, 20, governor.SignalAtCeiling)}
	r := build(t, Input{
		Settings: Settings{Limits: l, Governed: false},
		Windows:  ws,
		Start:    t0,
		End:      t0.Add(2 * time.Second),
		Attempts: Attempts{OK: 180, Status5xx: 20},
		Latency:  Latencies{AtCapacity: Latency{Count: 100, P50: time.Millisecond}, Overall: Latency{Count: 200, P50: time.Millisecond}},
	})
	if r.Outcome != OutcomeNotGoverned || r.Capacity.Found || r.Capacity.SettledWindows != 0 || r.Capacity.SaturatedWindows != 1 {
		t.Errorf("capacity %+v (%s)", r.Capacity, r.Outcome)
	}
	if r.Windows[0].Settled || r.Latency.AtCapacity.Count != 0 || r.Latency.Overall.Count != 200 {
		t.Errorf("windows %+v latency %+v", r.Windows, r.Latency)
	}
	if !strings.Contains(r.Verdict, "gave 100 req/s, goodput 90 req/s, 10 % attempt failures") {
		t.Errorf("verdict %q", r.Verdict)
	}
}

// A URL or script run's report says which HTTP client sent its attempts,
// in the JSON settings and the text's first line; other runs' is "".
func TestTransportReported(t *testing.T) {
	l := governor.NewLimits(governor.Concurrency, 10)
	for _, transport := range []string{"evloop", ""} {
		r := build(t, Input{Settings: Settings{Limits: l, Transport: transport}, Start: t0, End: t0.Add(time.Second)})
		var js, text bytes.Buffer
		if err := json.NewEncoder(&js).Encode(r); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		inJSON := strings.Contains(js.String(), `"transport":"evloop"`)
		inText := strings.Contains(strings.SplitN(text.String(), "\n", 2)[0], "(transport evloop)")
		if want := transport != ""; inJSON != want || inText != want || (!want && !strings.Contains(js.String(), `"transport":""`)) {
			t.Errorf("transport %q: in the JSON %v, in the text's first line %v\n%s\n%s", transport, inJSON, inText, js.String(), text.String())
		}
	}
}

func TestBuildRejectsImpossibleInput(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 100)
	bad := l
	bad.High = 2
	for name, c := range map[string]struct {
		in   Input
		want string
	}{
		"limits":      {Input{Settings: Settings{Limits: bad}, Start: t0, End: t0}, "high"},
		"end < start": {Input{Settings: Settings{Limits: l}, Start: t0, End: t0.Add(-time.Second)}, "run end"},
		"tick":        {Input{Settings: Settings{Limits: l, Tick: -1}, Start: t0, End: t0}, "tick must be >= 0"},
		"zero limits": {Input{Start: t0, End: t0}, "must be > 0"},
	} {
		// The message is worded for the user: it names the problem, and no
		// package.
		if _, err := Build(c.in); err == nil || !strings.Contains(err.Error(), c.want) || strings.HasPrefix(err.Error(), "report: ") {
			t.Errorf("%s: Build error %v, want one naming %q", name, err, c.want)
		}
	}
}

func TestBuildNotes(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 1000)
	ws := []governor.Window{
		window(0, 100, 100, 0, governor.SignalProbe),
		window(1, 100, 90, 10, governor.SignalBackoff),
		window(2, 1, 0, 30, governor.SignalAtFloor), // the target died
		window(3, 1, 0, 30, governor.SignalAtFloor),
	}
	r := build(t, Input{
		Settings:   Settings{Limits: l, Governed: true},
		Windows:    ws,
		Start:      t0,
		End:        t0.Add(4 * time.Second),
		Attempts:   Attempts{OK: 190, Refused: 60, Status5xx: 10},
		Iterations: Iterations{OK: 195, Failed: 5},
		Dropped:    7,
		Missed:     11,
		Aborted:    3,
		Latency:    Latencies{Clamped: 2},
	})
	all := strings.Join(r.Notes, "\n")
	for _, want := range []string{
		"7 arrivals dropped",
		"11 arrivals missed: the generator fell behind the schedule",
		"the last 2 windows failed above the bound at the floor",
		"retries hide failures: 97.5 % of iterations ok after tries, but 26.92 % of attempts failed",
		"2 latencies over one hour",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if r.Attempts.ByClass.Refused != 60 || r.Attempts.Failed != 70 || r.Iterations.OKFrac != 0.975 || r.AbortedAttempts != 3 || r.MissedArrivals != 11 {
		t.Errorf("counts %+v %+v", r.Attempts, r.Iterations)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failed 70 (26.92 %): 5xx 10, refused 60", "dropped      7 arrivals", "missed       11 arrivals: the generator fell behind the schedule", "aborted      3 attempts", "note         7 arrivals dropped"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[float64]string{812.4: "812", 81.24: "81.2", 8.124: "8.12", 0: "0", 1e7: "10000000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0.05: "5 %", 0.0496: "4.96 %", 1: "100 %", 0.00001: "0 %"} {
		if got := pct(v); got != want {
			t.Errorf("pct(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0: "-", 0.85: "850µs", 5.2071: "5.21ms", 1520: "1.52s", 26.015: "26ms"} {
		if got := msDur(v); got != want {
			t.Errorf("msDur(%v) = %q, want %q", v, got, want)
		}
	}
}

// FuzzBuild feeds Build windows no governor would produce (any offers,
// counts, signals and times): it must never panic, and every writer must
// still produce its output.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, true, false)
	f.Add([]byte{255, 0, 255, 0, 9, 9, 9, 9}, false, true)
	f.Fuzz(func(t *testing.T, data []byte, governed, interrupted bool) {
		l := governor.NewLimits(governor.Rate, 1000)
		var ws []governor.Window
		for i := 0; i+4 <= len(data) && len(ws) < 64; i += 4 {
			ok, failed := uint64(data[i])*7, uint64(data[i+1])*3
			w := window(int(data[i+2]%16)-4, float64(data[i+3])*4+1, ok, failed, governor.Signal(data[i+2]%11))
			w.End = w.Start.Add(time.Duration(data[i]%3) * time.Second) // zero-length windows too
			ws = append(ws, w)
		}
		in := Input{
			Settings:    Settings{Limits: l, Tick: time.Second, Governed: governed},
			Windows:     ws,
			Start:       t0,
			End:         t0.Add(time.Duration(len(data)) * time.Second),
			Interrupted: interrupted,
			Attempts:    Attempts{OK: uint64(len(data)), Other: uint64(len(ws))},
		}
		r, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == "" || r.Outcome == "" {
			t.Fatalf("no verdict: %+v", r)
		}
		for _, write := range []func(io.Writer) error{r.WriteJSON, r.WriteText, r.WriteCSV} {
			if err := write(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.WriteChart(io.Discard, SVG); err != nil && (len(ws) > 0 || !errors.Is(err, ErrNoWindows)) {
			t.Fatalf("chart of %d windows: %v", len(ws), err)
		}
	})
}

// queuedRun is a governed run that held the ceiling of 5000/s while goodput
// stayed at 185/s, its first window's p50 first; lat gives its latencies
// with p50 at capacity.
func queuedRun(first time.Duration) (in Input, lat func(p50 time.Duration) Latencies) {
	l := governor.NewLimits(governor.Rate, 5000)
	ws := []governor.Window{window(0, 5000, 185, 0, governor.SignalAtCeiling), window(1, 5000, 185, 0, governor.SignalAtCeiling)}
	lat = func(p50 time.Duration) Latencies {
		return Latencies{
			AtCapacity: Latency{Count: 370, P50: p50},
			Windows:    []WindowLatency{{Start: ws[0].Start, End: ws[0].End, Latency: Latency{Count: 185, P50: first}}},
		}
	}
	return Input{Settings: Settings{Limits: l, Tick: time.Second, Governed: true}, Windows: ws, Start: t0, End: t0.Add(2 * time.Second)}, lat
}

// A target that queues: the governor (its evidence switched off, say) held
// the ceiling of 5000/s while goodput stayed at 185/s and p50 latency grew
// from 11 ms to 5.4 s. The verdict must say the target queues and that the
// capacity is the plateau, never "held at the ceiling".
func TestBuildSaysTheTargetQueues(t *testing.T) {
	in, lat := queuedRun(11 * time.Millisecond)
	in.Latency = lat(5400 * time.Millisecond)
	r := build(t, in)
	if r.Outcome != OutcomeCapacity || strings.Contains(r.Verdict, "ceiling") ||
		r.Verdict != "the target queues: latency grew 491× (p50 11ms at first, 5.4s at the end) while goodput plateaued; capacity is the plateau, ≈ 185 req/s (2 settled windows)" {
		t.Fatalf("%q %q", r.Outcome, r.Verdict)
	}
	// Latency that grew only 3×, or goodput that kept up with the offer, is
	// no queue.
	in.Latency = lat(33 * time.Millisecond)
	if r := build(t, in); r.Outcome != OutcomeAtCeiling {
		t.Fatalf("3× latency: %q %q", r.Outcome, r.Verdict)
	}
	in.Latency = lat(5400 * time.Millisecond)
	in.Windows = []governor.Window{window(0, 5000, 5000, 0, governor.SignalAtCeiling), window(1, 5000, 5000, 0, governor.SignalAtCeiling)}
	if r := build(t, in); r.Outcome != OutcomeAtCeiling {
		t.Fatalf("goodput at the offer: %q %q", r.Outcome, r.Verdict)
	}
}

// A sub-millisecond answer whose p50 grew past queuesFactor but by less
// than the governor's LatencyFloor (0.2 → 1.1 ms on a loaded host) is the
// host's jitter: no "the target queues" verdict. The same growth to a few
// milliseconds is a queue.
func TestQueuesNeedsMoreThanJitter(t *testing.T) {
	in, lat := queuedRun(200 * time.Microsecond)
	in.Latency = lat(1100 * time.Microsecond)
	if r := build(t, in); strings.Contains(r.Verdict, "queues") {
		t.Fatalf("0.2 → 1.1 ms: %q %q", r.Outcome, r.Verdict)
	}
	in.Latency = lat(5 * time.Millisecond)
	if r := build(t, in); !strings.Contains(r.Verdict, "the target queues") {
		t.Fatalf("0.2 → 5 ms: %q %q", r.Outcome, r.Verdict)
	}
}

// A saturated generator and slow attempts are reported: the note and the
// text line name the rate and the signals; slow attempts are failed ones of
// their own class.
func TestBuildGeneratorAndSlow(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 100000)
	r := build(t, Input{
		Settings:   Settings{Limits: l, Governed: false},
		Windows:    []governor.Window{window(0, 100000, 40000, 0, governor.SignalAtCeiling)},
		Start:      t0,
		End:        t0.Add(time.Second),
		Attempts:   Attempts{OK: 40000, Slow: 25},
		Iterations: Iterations{OK: 40000, Failed: 25},
		Generator:  Generator{Ticks: 6, SaturatedTicks: 5, Rate: 41234.5, Signals: map[string]int{"cpu": 2, "wait": 1, "read": 1, "schedule": 1}, MaxWait: 120500 * time.Microsecond, MaxReadDelay: 7250 * time.Microsecond},
	})
	g := r.Generator
	if !g.Saturated || g.SaturatedAtPerS != 41234.5 || g.Signals != (GeneratorSignals{CPU: 2, Wait: 1, Read: 1, Schedule: 1}) || g.SaturatedTicks != 5 || g.Ticks != 6 || g.MaxWaitMs != 120.5 || g.MaxReadDelayMs != 7.25 {
		t.Errorf("generator %+v", g)
	}
	if r.Attempts.Failed != 25 || r.Attempts.ByClass.Slow != 25 {
		t.Errorf("attempts %+v", r.Attempts)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"generator    saturated at 41235/s (5 of 6 watch ticks: cpu 2, wait 1, read 1, schedule 1)", "note         generator saturated at 41235/s", "slow 25"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	clean := build(t, Input{Settings: Settings{Limits: l}, Windows: []governor.Window{window(0, 100000, 40000, 0, governor.SignalAtCeiling)}, Start: t0, End: t0.Add(time.Second)})
	text.Reset()
	if err := clean.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "saturated at") || clean.Generator.Saturated {
		t.Errorf("an unsaturated generator says nothing:\n%s", text.String())
	}
}

// A window that breached on latency (no failed attempt) is listed as
// saturated by damage, naming the evidence, never as failing attempts.
func TestSaturatedByLatencySaysDamage(t *testing.T) {
	in := demoRun().run(t)
	marked := false
	for i, w := range in.Windows {
		if w.Frac > in.Settings.Limits.High {
			in.Windows[i].By = "latency"
			marked = true
			break
		}
	}
	if !marked {
		t.Fatal("the demo run has no saturated window")
	}
	var text strings.Builder
	if err := build(t, in).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); !strings.Contains(s, "saturated    3 windows excluded (damage > 5 %): ") || !strings.Contains(s, " by latency)") {
		t.Errorf("text report:\n%s", s)
	}
}

// A verdict never overstates what it knows (issue 28). Settled windows
// whose level nothing damaged (probes, all clean, still rising) found no
// limit; windows held only by latency within a busy host's noise (p50 0.18
// → 0.28 ms) found none either; latency of a real queue (10 → 25 ms) and
// failures did, and the report names the evidence.
func TestVerdictNeverOverstates(t *testing.T) {
	conc := governor.NewLimits(governor.Concurrency, 400)
	latencyHeld := func(i int, offer float64, lat, base time.Duration) governor.Window {
		w := window(i, offer, uint64(offer*5), 0, governor.SignalDeadBand)
		w.Frac, w.By, w.Latency, w.Baseline = 0.03, "latency", lat, base
		w.Inflation = float64(lat) / float64(base)
		return w
	}
	climbing := []governor.Window{
		window(0, 4, 20, 0, governor.SignalBackoff), // a back-off at 4 on latency noise, long ago
		window(1, 5, 25, 0, governor.SignalProbe),
		window(2, 6, 30, 0, governor.SignalProbe),
		window(3, 7, 35, 0, governor.SignalProbe),
	}
	climbing[0].By, climbing[0].Frac = "latency", 0.34
	noise := []governor.Window{
		window(0, 4, 20, 0, governor.SignalProbe),
		latencyHeld(1, 5, 280*time.Microsecond, 180*time.Microsecond),
		latencyHeld(2, 5, 270*time.Microsecond, 180*time.Microsecond),
	}
	queue := []governor.Window{
		window(0, 4, 800, 0, governor.SignalProbe),
		latencyHeld(1, 5, 25*time.Millisecond, 10*time.Millisecond),
		latencyHeld(2, 5, 24*time.Millisecond, 10*time.Millisecond),
	}
	for _, tc := range []struct {
		name    string
		windows []governor.Window
		outcome Outcome
		verdict string
		heldBy  string
	}{
		{"still climbing", climbing, OutcomeNoLimit, "still climbing: no limit found up to 7 concurrent", ""},
		{"latency noise", noise, OutcomeNoLimit, "no limit found up to 5 concurrent: only latency held the offer, by at most 100µs", HeldByLatency},
		{"queue", queue, OutcomeCapacity, "capacity ≈ 5 concurrent", HeldByLatency},
	} {
		r := build(t, Input{
			Settings: Settings{Limits: conc, Tick: time.Second, Governed: true},
			Windows:  tc.windows,
			Start:    t0,
			End:      t0.Add(10 * time.Second),
			Attempts: Attempts{OK: 100},
		})
		if r.Outcome != tc.outcome || !strings.HasPrefix(r.Verdict, tc.verdict) || r.Capacity.HeldBy != tc.heldBy {
			t.Errorf("%s: %q %q held by %q\nwant %q %q held by %q", tc.name, r.Outcome, r.Verdict, r.Capacity.HeldBy, tc.outcome, tc.verdict, tc.heldBy)
		}
		if r.Capacity.Found != (tc.outcome == OutcomeCapacity) || r.Capacity.SettledWindows == 0 {
			t.Errorf("%s: capacity %+v", tc.name, r.Capacity)
		}
		var text strings.Builder
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if tc.outcome == OutcomeNoLimit && strings.Contains(text.String(), "capacity ≈") {
			t.Errorf("%s: the text report claims a capacity:\n%s", tc.name, text.String())
		}
	}
}

// An interrupted run's verdict names the attempts the stop cut off, even
// when no window closed: "no capacity" over 0 % failures must not hide
// them.
func TestVerdictCountsAbortedBeforeAnyWindow(t *testing.T) {
	in := Input{
		Settings:    Settings{Limits: governor.NewLimits(governor.Rate, 100), Tick: time.Second, Governed: true},
		Start:       t0,
		End:         t0.Add(4 * time.Second),
		Interrupted: true,
		Attempts:    Attempts{OK: 2},
		Aborted:     642,
	}
	r := build(t, in)
	want := "interrupted before any window closed: no capacity measured; 642 attempts aborted in flight by the stop, neither ok nor failed"
	if r.Outcome != OutcomeNoWindows || r.Verdict != want {
		t.Fatalf("%q %q, want %q", r.Outcome, r.Verdict, want)
	}
}

// A target that never answers fails its windows by unserved arrivals, not
// by failed attempts (none resolved): the verdict says which.
func TestNeverSettledByUnserved(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 20)
	ws := []governor.Window{window(0, 1, 0, 0, governor.SignalAtFloor), window(1, 1, 0, 0, governor.SignalAtFloor)}
	for i := range ws {
		ws[i].Frac, ws[i].By = 1, "unserved"
	}
	r := build(t, Input{Settings: Settings{Limits: l, Governed: true}, Windows: ws, Start: t0, End: t0.Add(10 * time.Second)})
	if want := "never settled: target failed even at the floor (1/s: 100 % of arrivals unserved)"; r.Outcome != OutcomeNeverSettled || r.Verdict != want {
		t.Fatalf("%q %q, want %q", r.Outcome, r.Verdict, want)
	}
}

// A run that closed no window although it ran past the window was short
// of answers, not of time: the verdict does not ask to run longer.
func TestNoWindowsLongRun(t *testing.T) {
	in := Input{Settings: Settings{Limits: governor.NewLimits(governor.Rate, 100), Governed: true}, Start: t0, End: t0.Add(33 * time.Second)}
	r := build(t, in)
	want := "ended before any window closed: no capacity measured (in 33s no window resolved its 20 attempts: the target answers too slowly, or not at all)"
	if r.Outcome != OutcomeNoWindows || r.Verdict != want {
		t.Fatalf("%q %q, want %q", r.Outcome, r.Verdict, want)
	}
	in.End = t0.Add(3 * time.Second)
	if r = build(t, in); r.Verdict != "ended before any window closed: no capacity measured (run longer than the 5s window)" {
		t.Fatalf("a 3 s run: %q", r.Verdict)
	}
}

// DNS and TLS failures are named in words in the text report's attempts
// line, not only by their class.
func TestTextNamesDNSAndTLS(t *testing.T) {
	r := build(t, Input{Settings: Settings{Limits: governor.NewLimits(governor.Rate, 100)}, Start: t0, End: t0.Add(time.Second),
		Attempts: Attempts{OK: 1, DNS: 3, TLS: 2}})
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "dns 3 (could not resolve), tls 2 (TLS handshake failed)") {
		t.Fatalf("the attempts line does not name them:\n%s", b.String())
	}
}

// The answers' read delay is in the JSON (zero without stamped answers)
// and, when there is one, a line of the text.
func TestReadDelayReported(t *testing.T) {
	l := governor.NewLimits(governor.Concurrency, 10)
	in := Input{Settings: Settings{Limits: l}, Start: t0, End: t0.Add(time.Second)}
	r := build(t, in)
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if r.ReadDelay != (ReadDelayJSON{}) || strings.Contains(text.String(), "read delay") {
		t.Errorf("no stamped answer: %+v\n%s", r.ReadDelay, text.String())
	}
	in.ReadDelay.Sum, in.ReadDelay.N, in.ReadDelay.Max = 3*time.Second, 4, 2500*time.Millisecond
	r = build(t, in)
	text.Reset()
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := (ReadDelayJSON{Answers: 4, MeanMS: 750, MaxMS: 2500}); r.ReadDelay != want {
		t.Errorf("read delay %+v, want %+v", r.ReadDelay, want)
	}
	if !strings.Contains(text.String(), "read delay   mean 750 ms, max 2500 ms over 4 answers") {
		t.Errorf("text lacks the read delay:\n%s", text.String())
	}
}
