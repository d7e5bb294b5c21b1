package governor

import (
	"strings"
	"testing"
	"time"
)

// refuse resolves n attempts that found no server (refused: failed and
// unreachable).
func (f *fakeLoad) refuse(n uint64) {
	f.serve(0, n, time.Millisecond, 0, 0)
	f.load.Unreachable += n
}

// An outage — every attempt refused — holds the offer with one movement
// line, leaves last_bad alone, and when the target answers again the seed's
// rules go on from the held offer.
func TestOutageHoldsAndResumes(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(300), WithEarlyBreach(true))
	h.lc.serve(1500, 0, time.Millisecond, 0, 0)
	ask, _ := h.tick(5 * time.Second) // clean: slow start 300 → 600
	h.confirm(ask)
	h.lc.serve(2000, 1000, time.Millisecond, 0, 0) // 33 % failed by 503s: a back-off, last_bad 600
	ask, _ = h.tick(5 * time.Second)
	h.confirm(ask)
	offer, lastBad := h.g.State().Offer, h.g.State().LastBad
	if lastBad != 600 || offer >= 600 {
		t.Fatalf("setup: offer %v last_bad %v, want a back-off from 600", offer, lastBad)
	}
	for i := range 10 { // 10 s of refusals, read every second
		h.lc.refuse(uint64(offer))
		if ask, ok := h.tick(time.Second); ok {
			t.Fatalf("read %d of the outage asked for %v: the offer must hold", i, ask)
		}
	}
	st := h.g.State()
	if !st.Outage || st.Offer != offer || st.LastBad != lastBad || st.Last.Signal != SignalOutage {
		t.Fatalf("in the outage: state %+v, want offer %v and last_bad %v held, signal outage", st, offer, lastBad)
	}
	if n := strings.Count(h.log.String(), "level=INFO msg=throttle phase=main offer="+num(offer)+" signal=outage"); n != 1 {
		t.Errorf("%d movement lines say outage, want one:\n%s", n, h.log.String())
	}
	// The target answers again: the outage ends at the first read that
	// shows it, and the next clean window climbs from the held offer.
	h.lc.serve(uint64(offer), 0, time.Millisecond, 0, 0)
	if _, ok := h.tick(time.Second); ok || h.g.State().Outage {
		t.Fatalf("the target answers: state %+v, want the outage over and no move yet", h.g.State())
	}
	h.lc.serve(uint64(5*offer), 0, time.Millisecond, 0, 0)
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask <= offer || h.g.State().LastBad != lastBad {
		t.Fatalf("after the outage: ask %v %v state %+v, want a climb from %v with last_bad %v", ask, ok, h.g.State(), offer, lastBad)
	}
}

// A target that answers 503 to everything is shedding, not out: congestion.
// And refusals under 90 % of a window's attempts are congestion too.
func TestOutageBoundary(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(300))
	h.lc.serve(0, 1500, time.Millisecond, 0, 0) // every attempt a 503
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask >= 300 || h.last().Decision.Signal != SignalBackoff || h.g.State().Outage {
		t.Fatalf("all 503: ask %v %v window %+v, want a back-off", ask, ok, h.last())
	}
	h = newLoadHarness(t, loadRateLimits(300))
	h.lc.refuse(1349) // 89.9 % unreachable, the rest 503s
	h.lc.serve(0, 151, time.Millisecond, 0, 0)
	if _, ok := h.tick(5 * time.Second); !ok || h.last().Decision.Signal != SignalBackoff {
		t.Fatalf("89.9 %% refused: window %+v, want congestion (a back-off)", h.last())
	}
	h = newLoadHarness(t, loadRateLimits(300))
	h.lc.refuse(1350) // 90 %
	h.lc.serve(0, 150, time.Millisecond, 0, 0)
	if ask, ok := h.tick(5 * time.Second); ok || h.last().Decision.Signal != SignalOutage || h.g.State().LastBad != 0 {
		t.Fatalf("90 %% refused: ask %v %v window %+v, want an outage hold", ask, ok, h.last())
	}
}

// The outage's first refusals, read as congestion before they were plain,
// cost a back-off; entering the outage undoes it: the offer and last_bad
// go back to what they were before it.
func TestOutageUndoesItsBackoff(t *testing.T) {
	h := newLoadHarness(t, loadRateLimits(300))
	h.lc.serve(1200, 0, time.Millisecond, 0, 0)
	h.lc.refuse(300) // 20 % refused: a back-off
	ask, ok := h.tick(5 * time.Second)
	if !ok || ask >= 300 {
		t.Fatalf("setup: ask %v %v, want a back-off", ask, ok)
	}
	h.confirm(ask)
	h.lc.refuse(1500)
	ask, ok = h.tick(5 * time.Second)
	if !ok || ask != 300 || h.last().Decision.Signal != SignalOutage || h.g.State().LastBad != 0 {
		t.Fatalf("outage: ask %v %v window %+v state %+v, want 300 back and last_bad 0", ask, ok, h.last(), h.g.State())
	}
}
