// Command cadence reads a throttle JSON report (--out) and prints the
// governor's cadence figures of issue 11 from its windows[]: the median
// window length, the median gap between one window's end and the next one's
// start, the failed attempts before the first settled window as a share of
// the attempts resolved in the windows before it, and the capacity found.
//
//	go run ./bench/cadence r.json
//
// Attempts are those the windows counted: the settle span after each change
// (one tick) is not part of any window, so its attempts are in neither figure.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

type report struct {
	Settings struct {
		WindowS float64 `json:"window_s"`
		TickS   float64 `json:"tick_s"`
	} `json:"settings"`
	Capacity struct {
		Found       bool    `json:"found"`
		GoodputPerS float64 `json:"goodput_per_s"`
	} `json:"capacity"`
	Windows []struct {
		StartS    float64 `json:"start_s"`
		Offer     float64 `json:"offer"`
		NextOffer float64 `json:"next_offer"`
		EndS      float64 `json:"end_s"`
		OK        uint64  `json:"ok"`
		Failed    uint64  `json:"failed"`
		Signal    string  `json:"signal"`
		Early     bool    `json:"early"`
		Settled   bool    `json:"settled"`
	} `json:"windows"`
}

// figures are the cadence figures of one report.
type figures struct {
	window, tick           float64 // declared, seconds
	medianLen, medianGap   float64 // seconds
	medianChangeGap        float64 // seconds, after the windows that moved the offer
	windows, early         int
	failedBefore, sentTill uint64 // before the first settled window
	settledAt              float64
	capacity               float64
	found                  bool
}

func measure(r report) (figures, error) {
	f := figures{window: r.Settings.WindowS, tick: r.Settings.TickS, capacity: r.Capacity.GoodputPerS, found: r.Capacity.Found}
	var lens, gaps, changeGaps []float64
	first := -1
	for i, w := range r.Windows {
		if w.Signal == "no-evidence" {
			continue // a record, not the end of a window: the window goes on
		}
		f.windows++
		if w.Early {
			f.early++
		} else {
			lens = append(lens, w.EndS-w.StartS)
		}
		if i+1 < len(r.Windows) {
			gaps = append(gaps, r.Windows[i+1].StartS-w.EndS)
			if w.NextOffer != w.Offer {
				changeGaps = append(changeGaps, r.Windows[i+1].StartS-w.EndS)
			}
		}
		if first < 0 && w.Settled {
			first, f.settledAt = i, w.StartS
		}
		if first < 0 {
			f.failedBefore += w.Failed
			f.sentTill += w.OK + w.Failed
		}
	}
	if len(lens) == 0 {
		return f, fmt.Errorf("no full-length window in the report")
	}
	f.medianLen, f.medianGap, f.medianChangeGap = median(lens), median(gaps), median(changeGaps)
	return f, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func (f figures) print(w io.Writer) {
	fmt.Fprintf(w, "windows                 %d (%d closed early by a gross breach)\n", f.windows, f.early)
	fmt.Fprintf(w, "median window length    %.3f s  (declared %.3g s; %.3f ×; full-length windows only)\n", f.medianLen, f.window, f.medianLen/f.window)
	fmt.Fprintf(w, "median gap              %.3f s  (tick %.3g s; %.3f ×; every window)\n", f.medianGap, f.tick, f.medianGap/f.tick)
	fmt.Fprintf(w, "median gap after change %.3f s  (%.3f × tick; windows that moved the offer)\n", f.medianChangeGap, f.medianChangeGap/f.tick)
	pct := 0.0
	if f.sentTill > 0 {
		pct = 100 * float64(f.failedBefore) / float64(f.sentTill)
	}
	fmt.Fprintf(w, "before first settled    %d failed of %d attempts = %.2f %%  (first settled window starts at %.1f s)\n", f.failedBefore, f.sentTill, pct, f.settledAt)
	if f.found {
		fmt.Fprintf(w, "capacity                %.1f /s\n", f.capacity)
	} else {
		fmt.Fprintf(w, "capacity                not found\n")
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cadence REPORT.json")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cadence:", err)
		os.Exit(1)
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Fprintln(os.Stderr, "cadence:", err)
		os.Exit(1)
	}
	f, err := measure(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cadence:", err)
		os.Exit(1)
	}
	f.print(os.Stdout)
}
