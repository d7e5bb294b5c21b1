package report

import "fmt"

// outages lists the run's outages (windows the governor judged outage:
// the target unreachable, the offer held) as intervals in seconds since
// the run started, adjacent windows merged.
func (r *Report) outages() []string {
	out := append([]string(nil), r.earlierOutages...)
	var from, to float64
	open := false
	flush := func() {
		if open {
			out = append(out, fmt.Sprintf("%.1f–%.1fs", from, to))
			open = false
		}
	}
	for _, w := range r.Windows {
		if w.Signal != "outage" {
			flush()
			continue
		}
		if !open {
			from, open = w.StartS, true
		}
		to = w.EndS
	}
	flush()
	return out
}
