package phase

import (
	"time"

	"github.com/throttlekit/throttle/governor"
)

// KeepWindows is how many of its newest closed windows a phase holds one
// by one (report.KeepWindows is the same): 10 000 windows, 14 hours of
// 5 s windows, under 3 MB. A longer phase sums up the older ones in
// Earlier, so a day at 1 s windows (86 400 of them) costs no more memory
// than its last 10 000; the timeline file, streamed as windows close,
// keeps every one.
const KeepWindows = 10_000

// maxOutageSpans bounds the outage intervals Earlier lists.
const maxOutageSpans = 1000

// Span is an interval of a phase.
type Span struct{ Start, End time.Time }

// Earlier sums up the windows a phase no longer holds one by one: the
// oldest, past its newest KeepWindows.
type Earlier struct {
	// Windows counts them, Saturated those above the failure bound
	// (governor.Saturated).
	Windows, Saturated int
	// First is the phase's first window (zero when Windows is 0).
	First governor.Window
	// Outages are the outage intervals among them (adjacent outage windows
	// merged), the first maxOutageSpans of them.
	Outages []Span

	prevOut bool // the last window summed up was an outage
}

// forget moves the oldest n windows into p.earlier. Callers hold
// p.windowsMu.
func (p *Phase) forget(n int) {
	e := &p.earlier
	high := p.cfg.Limits.High
	for _, w := range p.windows[:n] {
		if e.Windows == 0 {
			e.First = w
		}
		e.Windows++
		if governor.Saturated(w, high) {
			e.Saturated++
		}
		out := w.Decision.Signal == governor.SignalOutage
		switch k := len(e.Outages); {
		case out && e.prevOut && k > 0:
			e.Outages[k-1].End = w.End
		case out && k < maxOutageSpans:
			e.Outages = append(e.Outages, Span{w.Start, w.End})
		}
		e.prevOut = out
	}
	p.windows = append(p.windows[:0], p.windows[n:]...)
}
