package governor

import (
	"testing"
	"time"
)

// A latency-knee hold is a verdict of its own: its signal names latency,
// the window keeps the fraction its failures make (it is not moved into the
// dead band to make Decide hold), it breaks the memory streak and it counts
// as a settled window. A window whose failures already sit in the dead band
// holds on them: its reason is the dead band, whatever the latency adds.
func TestLatencyHoldIsItsOwnVerdict(t *testing.T) {
	for _, c := range []struct {
		name         string
		failPct      uint64 // failed attempts, in percent
		want         Signal
		wantBy       string
		wantAsk      bool
		latencyAfter time.Duration
	}{
		{"clean failures, 1.4× latency", 0, SignalLatency, "latency", false, 14 * time.Millisecond},
		{"2 % failures, 1.4× latency", 2, SignalDeadBand, "", false, 14 * time.Millisecond},
		{"clean failures, 1.2× latency", 0, SignalSlowStart, "", true, 12 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newLoadHarness(t, loadConcLimits(2))
			h.lc.serve(1000, 0, 10*time.Millisecond, 0, 0)
			if ask, ok := h.tick(5 * time.Second); !ok || ask != 4 {
				t.Fatalf("low load: ask %v %v, want the slow start to 4", ask, ok)
			}
			h.confirm(4)
			// 4 in flight without think time for 5 s: 20 s of attempts.
			n := uint64(20 * time.Second / c.latencyAfter)
			failed := n * c.failPct / 100
			h.lc.serve(n-failed, failed, c.latencyAfter, 0, 0)
			ask, ok := h.tick(5 * time.Second)
			w := h.last()
			frac := float64(failed) / float64(n)
			if ok != c.wantAsk || w.Decision.Signal != c.want || w.By != c.wantBy || w.Frac != frac || w.FailFrac != frac {
				t.Fatalf("ask %v %v window %+v, want signal %s by %q on a fraction of %v", ask, ok, w, c.want, c.wantBy, frac)
			}
			if c.want != SignalSlowStart && (w.Decision.Kind != KindHold || w.Streak != 0 || !Settled(w, h.g.Limits().High)) {
				t.Fatalf("window %+v, want a settled hold that breaks the streak", w)
			}
		})
	}
}
