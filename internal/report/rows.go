package report

import "github.com/throttlekit/throttle/governor"

// windowRows is the timeline; the windows whose indices are in steady are
// flagged settled.
func windowRows(in Input, steady []int) []WindowJSON {
	lat := map[[2]int64]WindowLatency{}
	for _, wl := range in.Latency.Windows {
		lat[span(wl.Start, wl.End)] = wl
	}
	settled := make(map[int]bool, len(steady))
	for _, i := range steady {
		settled[i] = true
	}
	rows := make([]WindowJSON, 0, len(in.Windows))
	for i, w := range in.Windows {
		wl := lat[span(w.Start, w.End)]
		rows = append(rows, windowRow(in, in.Earlier.Windows+i, w, wl.Latency, wl.Missed, settled[i]))
	}
	return rows
}

// windowRow is window w's row, the index-th of the run; missed are the
// arrivals missed since the window before it closed.
func windowRow(in Input, index int, w governor.Window, l Latency, missed uint64, settled bool) WindowJSON {
	n := w.OK + w.Failed
	secs := w.End.Sub(w.Start).Seconds()
	row := WindowJSON{
		Index:     index,
		StartS:    round(w.Start.Sub(in.Start).Seconds(), 3),
		EndS:      round(w.End.Sub(in.Start).Seconds(), 3),
		Offer:     round(w.Offer, 3),
		OK:        w.OK,
		Failed:    w.Failed,
		Frac:      round(w.Frac, 6),
		Signal:    w.Decision.Signal.String(),
		Kind:      w.Decision.Kind.String(),
		Early:     w.Early,
		FailFrac:  round(w.FailFrac, 6),
		Dropped:   w.Dropped,
		Queued:    w.Queued,
		Unserved:  w.Unserved,
		MeanMs:    ms(w.Latency),
		Inflation: round(w.Inflation, 3),
		DrainedS:  round(w.Drained.Seconds(), 3),
		By:        w.By,
		Missed:    missed,

		GeneratorSaturated: w.GeneratorSaturated,
		NextOffer:          round(w.Decision.Offer, 3),
		LastBad:            round(w.Decision.LastBad, 3),
		Streak:             w.Streak,
		Settled:            settled,
		Saturated:          governor.Saturated(w, in.Settings.Limits.High),
	}
	if secs > 0 {
		row.AttemptsPerS = round(float64(n)/secs, 3)
		row.GoodputPerS = round(float64(w.OK)/secs, 3)
	}
	if l.Count > 0 {
		row.P50Ms = ms(l.P50)
		row.P99Ms = ms(l.P99)
	}
	return row
}

// timeline is a long run's every window, streamed to a Spool as they
// closed: WriteCSV writes its rows from there. A streamed window is
// flagged settled when it belongs to the steady state the report's
// capacity rests on: settled, and near the level of level (the last
// steady window), as governor.Steady judges the pair.
type timeline struct {
	spool *Spool
	in    Input
	level *governor.Window
}

func (t *timeline) rows(fn func(WindowJSON) error) error {
	high := t.in.Settings.Limits.High
	return t.spool.each(func(i int, w governor.Window, l Latency, missed uint64) error {
		steady := t.level != nil && t.in.Settings.Governed && governor.Settled(w, high) &&
			len(governor.Steady([]governor.Window{w, *t.level}, high)) == 2
		return fn(windowRow(t.in, i, w, l, missed, steady))
	})
}
