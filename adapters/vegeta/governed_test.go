package throttlevegeta

import (
	"fmt"
	"log/slog"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/throttlekit/throttle/clock"
	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/target"
	"github.com/throttlekit/throttle/internal/testwait"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"go.uber.org/goleak"
)

func TestGovernRejectsBadLimits(t *testing.T) {
	_, err := Govern(governor.NewLimits(governor.Concurrency, 10))
	if err == nil || !strings.Contains(err.Error(), "rate mode") {
		t.Errorf("concurrency limits: error = %v, want one naming rate mode", err)
	}
	l := governor.NewLimits(governor.Rate, 10)
	l.Floor = 0
	if _, err := Govern(l); err == nil || !strings.Contains(err.Error(), "floor") {
		t.Errorf("floor 0: error = %v, want one naming the floor", err)
	}
	l = governor.NewLimits(governor.Rate, 10)
	if _, err := Govern(l, WithPacerOptions(WithBurst(-1))); err == nil || !strings.Contains(err.Error(), "burst") {
		t.Errorf("negative burst: error = %v, want one naming the burst", err)
	}
}

// TestGovernedAttackSettlesNearCapacity runs a real vegeta attack, authored
// at ten times a loopback target's capacity, and checks that the governed
// rate finds the capacity instead: the offer ends near it, and over the last
// stretch of the attack the target's goodput is near it while the attempt
// failure fraction stays near the bound. Real time, about 8 s: long enough
// for a loaded machine's search to settle too. The bands are loose below and
// tight above: the target bounds the goodput whatever the load, while a
// loaded machine's attack comes in bursts (late timers) that the target
// sheds under its capacity. How exactly the governor converges is tested
// deterministically in internal/sim.
func TestGovernedAttackSettlesNearCapacity(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const capacity = 200.0
	tgt, err := target.New(target.NewConfig(capacity))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tgt)
	defer srv.Close()

	l := governor.NewLimits(governor.Rate, 10*capacity)
	l.Start = 50
	l.Window = 250 * time.Millisecond
	var (
		mu      sync.Mutex
		windows []governor.Window
	)
	g, err := Govern(l, WithGovernorOptions(
		governor.WithTick(25*time.Millisecond),
		governor.WithLogger(slog.New(slog.DiscardHandler)),
		governor.WithObserver(func(w governor.Window) { mu.Lock(); windows = append(windows, w); mu.Unlock() }),
	))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()

	const attack, tail = 8 * time.Second, 2 * time.Second
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: srv.URL + "/"})
	atk := vegeta.NewAttacker(vegeta.Timeout(2*time.Second), vegeta.KeepAlive(true))
	defer atk.Stop()
	var tailOK, tailFailed int
	began := time.Now()
	for res := range g.Results(atk.Attack(targeter, g.Pacer(), attack, "governed")) {
		if res.Timestamp.Sub(began) >= attack-tail {
			if DefaultClassifier(res) {
				tailFailed++
			} else {
				tailOK++
			}
		}
	}
	g.Close()

	offer := g.Governor().State().Offer
	goodput := float64(tailOK) / tail.Seconds()
	frac := float64(tailFailed) / math.Max(1, float64(tailOK+tailFailed))
	mu.Lock()
	for _, w := range windows {
		t.Logf("window offer=%.0f ok=%d failed=%d frac=%.3f %v→%.0f", w.Offer, w.OK, w.Failed, w.Frac, w.Decision.Signal, w.Decision.Offer)
	}
	mu.Unlock()
	t.Logf("final offer %.0f, tail goodput %.0f/s, tail attempt failure %.1f%%", offer, goodput, frac*100)

	if offer < 0.3*capacity || offer > 1.4*capacity {
		t.Errorf("final offer %.0f, want near the capacity %.0f", offer, capacity)
	}
	if goodput < 0.3*capacity || goodput > 1.1*capacity {
		t.Errorf("goodput over the last %v was %.0f/s, want near the capacity %.0f", tail, goodput, capacity)
	}
	if frac > 0.15 {
		t.Errorf("attempt failure over the last %v was %.1f%%, want near the 5%% bound", tail, frac*100)
	}
	if ok, failed := g.Attempts(); ok+failed == 0 {
		t.Error("no attempts were observed")
	}
}

// TestSetRateIsAdoptedByTheGovernor: a user's rate reaches the pacer, clamped
// to the ceiling, and the governor adopts what was applied. The governor runs
// on a fake clock that never moves, so no window of its own interferes.
func TestSetRateIsAdoptedByTheGovernor(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := governor.NewLimits(governor.Rate, 500)
	l.Start = 10
	g, err := Govern(l, WithGovernorOptions(
		governor.WithClock(clock.NewFake(time.Unix(0, 0))),
		governor.WithLogger(slog.New(slog.DiscardHandler)),
	))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, c := range []struct{ set, want float64 }{{0, 10}, {100, 100}, {1e6, 500}} {
		if c.set != 0 {
			g.SetRate(c.set)
		}
		testwait.Until(t, testwait.Deadline, fmt.Sprintf("SetRate(%v) to bring the governor's offer and the pacer's rate to %v", c.set, c.want), func() bool {
			s := g.Governor().State()
			return s.Offer == c.want && !s.Pending && g.Pacer().Rate(0) == c.want
		})
	}
	g.Close()
	g.Close() // idempotent
}
