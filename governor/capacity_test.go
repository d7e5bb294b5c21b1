package governor

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// win makes a 5 s window at offer with ok/failed attempts, decided by signal.
func win(i int, offer float64, ok, failed uint64, signal Signal) Window {
	w := Window{Start: t0.Add(time.Duration(i) * 5 * time.Second), Offer: offer, OK: ok, Failed: failed}
	w.End = w.Start.Add(5 * time.Second)
	if ok+failed > 0 {
		w.Frac = float64(failed) / float64(ok+failed)
	}
	w.Decision = Decision{Signal: signal, From: offer, Offer: offer}
	return w
}

func TestCapacityRestsOnTheSteadyStateOnly(t *testing.T) {
	ws := []Window{
		win(0, 1, 19, 1, SignalDeadBand),        // settled, but at offer 1: not the steady level
		win(1, 512, 2560, 0, SignalSlowStart),   // searching
		win(2, 1024, 5000, 120, SignalDeadBand), // settled, but before the phase's last level moved
		win(3, 2048, 5000, 5240, SignalBackoff), // saturated (51 %)
		win(4, 1000, 5000, 0, SignalProbe),
		win(5, 1020, 5000, 100, SignalDeadBand),
		win(6, 1020, 5000, 100, SignalDeadBand),
	}
	e := Capacity(ws, 0.05)
	if e.Saturated != 1 {
		t.Fatalf("saturated %d, want 1", e.Saturated)
	}
	// Window 2 (1024) is within 15 % of the last settled level (1020), so it
	// belongs to the steady state; window 0 (offer 1) does not.
	if got, want := Steady(ws, 0.05), []int{2, 4, 5, 6}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Steady = %v, want %v", got, want)
	}
	if e.Windows != 4 || e.AtCeiling {
		t.Fatalf("estimate %+v", e)
	}
	if math.Abs(e.Goodput-20000.0/20) > 1e-9 || math.Abs(e.Throughput-20320.0/20) > 1e-9 {
		t.Fatalf("goodput %v throughput %v", e.Goodput, e.Throughput)
	}
	if math.Abs(e.Offer-(1024+1000+1020+1020)/4.0) > 1e-9 || math.Abs(e.Frac-320.0/20320) > 1e-12 {
		t.Fatalf("offer %v frac %v", e.Offer, e.Frac)
	}
}

func TestCapacityNeverCountsWindowsAboveHigh(t *testing.T) {
	// A "probe" window can only be clean, but a report must never count a
	// window above the bound whatever its record says.
	ws := []Window{win(0, 100, 90, 10, SignalProbe), win(1, 100, 500, 0, SignalDeadBand)}
	e := Capacity(ws, 0.05)
	if e.Windows != 1 || e.Saturated != 1 || e.Goodput != 100 {
		t.Fatalf("estimate %+v", e)
	}
}

func TestCapacityAtCeilingAndNever(t *testing.T) {
	ceiling := []Window{win(0, 64, 320, 0, SignalSlowStart), win(1, 100, 500, 0, SignalAtCeiling), win(2, 100, 500, 0, SignalAtCeiling)}
	if e := Capacity(ceiling, 0.05); !e.AtCeiling || e.Windows != 2 || e.Goodput != 100 {
		t.Fatalf("at ceiling: %+v", e)
	}
	dead := []Window{win(0, 4, 0, 20, SignalBackoff), win(1, 1, 0, 20, SignalAtFloor), win(2, 1, 0, 0, SignalNoEvidence)}
	if e := Capacity(dead, 0.05); e.Windows != 0 || e.Goodput != 0 || e.Saturated != 2 {
		t.Fatalf("never settled: %+v", e)
	}
	if e := Capacity(nil, 0.05); e != (Estimate{}) {
		t.Fatalf("no windows: %+v", e)
	}
}

func TestCapacityFollowsTheLatestLevel(t *testing.T) {
	// The target's capacity doubled mid-run: the estimate is the new level.
	ws := []Window{
		win(0, 500, 2500, 0, SignalDeadBand), win(1, 500, 2500, 0, SignalProbe),
		win(2, 1000, 5000, 0, SignalMemoryCleared), win(3, 1010, 5050, 0, SignalDeadBand),
	}
	if e := Capacity(ws, 0.05); e.Windows != 2 || math.Abs(e.Goodput-1005) > 1e-9 {
		t.Fatalf("estimate %+v", e)
	}
}
