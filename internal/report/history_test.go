package report

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

// A long run keeps only its newest windows in memory: the report built
// from them, the earlier windows summed up and the timeline streamed to a
// spool writes the same CSV timeline, row for row, as the report built
// from every window; its windows[] holds the newest, indexed from where
// they stand in the run, and the saturated count and outages cover the
// whole run.
func TestLongRunTimelineFromSpool(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 10000)
	var ws []governor.Window
	for i := range 40 {
		switch {
		case i < 3:
			ws = append(ws, window(i, 100*float64(int(1)<<i), 100, 0, governor.SignalSlowStart))
		case i < 5:
			ws = append(ws, window(i, 800, 600, 200, governor.SignalBackoff)) // saturated, among the earlier
		case i < 7:
			w := window(i, 720, 0, 50, governor.SignalOutage)
			ws = append(ws, w)
		case i%3 == 0:
			ws = append(ws, window(i, 760, 740, 20, governor.SignalDeadBand))
		default:
			ws = append(ws, window(i, 720+float64(i%3), 720, 0, governor.SignalProbe))
		}
	}
	sp, err := NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	rec, err := NewRecorder(l.High, WithWindowSink(sp.Add))
	if err != nil {
		t.Fatal(err)
	}
	var missed uint64 // the generator misses i%4 arrivals in window i
	rec.SetMissed(func() uint64 { return missed })
	for i, w := range ws {
		for range w.OK + w.Failed {
			rec.Record(time.Duration(2+i%5) * time.Millisecond)
		}
		missed += uint64(i % 4)
		rec.Observe(w)
	}
	if sp.Len() != len(ws) {
		t.Fatalf("spool holds %d windows, want %d", sp.Len(), len(ws))
	}
	base := Input{Settings: Settings{Limits: l, Governed: true}, Start: t0, End: t0.Add(40 * time.Second), Latency: rec.Summary()}
	full := base
	full.Windows = ws
	kept := 30
	long := base
	long.Windows = ws[len(ws)-kept:]
	long.Earlier = Earlier{Windows: len(ws) - kept, Saturated: 2, First: ws[0], Outages: [][2]time.Time{{ws[5].Start, ws[6].End}}}
	long.Timeline = sp
	a, b := build(t, full), build(t, long)

	var ca, cb bytes.Buffer
	if err := a.WriteCSV(&ca); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(cb.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if ca.String() != cb.String() || len(rows) != len(ws)+1 {
		t.Errorf("the streamed timeline (%d rows) differs from the whole run's:\n%s\nwant\n%s", len(rows)-1, cb.String(), ca.String())
	}
	// Each row has the arrivals missed in its window, streamed or not.
	for i, row := range rows[1:] {
		if got, want := row[len(row)-1], strconv.Itoa(i%4); rows[0][len(row)-1] != "missed" || got != want {
			t.Fatalf("row %d: %s %s, want missed %s", i, rows[0][len(row)-1], got, want)
		}
	}
	if len(b.Windows) != kept || b.Windows[0].Index != len(ws)-kept || b.EarlierWindows != len(ws)-kept {
		t.Errorf("windows[] holds %d from index %d, earlier %d: want the newest %d from %d", len(b.Windows), b.Windows[0].Index, b.EarlierWindows, kept, len(ws)-kept)
	}
	// The capacity rests on the kept windows (here the newest 30 of the 33
	// steady ones), its latency on every steady window's offer; the
	// saturated windows are the whole run's.
	if b.Capacity.SaturatedWindows != a.Capacity.SaturatedWindows || b.Capacity.SettledWindows != 30 || a.Capacity.SettledWindows != 33 ||
		b.Capacity.GoodputPerS != a.Capacity.GoodputPerS || b.Latency.AtCapacity != a.Latency.AtCapacity {
		t.Errorf("capacity %+v latency %+v: want the whole run's %+v %+v on 30 settled windows", b.Capacity, b.Latency.AtCapacity, a.Capacity, a.Latency.AtCapacity)
	}
	var ta, tb bytes.Buffer
	_ = a.WriteText(&ta)
	_ = b.WriteText(&tb)
	if !strings.Contains(tb.String(), "5.0–7.0s") {
		t.Errorf("the earlier outage is not listed:\n%s", tb.String())
	}
	if !strings.Contains(tb.String(), "40 windows") || !strings.Contains(strings.Join(b.Notes, "\n"), "newest 30 of the run's 40 windows") {
		t.Errorf("the text or notes do not say the run's 40 windows:\n%s", tb.String())
	}
}
