package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// agentsRun runs the governor (early breach on, the §5 setting) against
// shed capacity c for 240 s, as one process or over WithAgents, and
// returns the decisions it took to first enter SettleBand and the share of
// the last 120 s's windows whose offer lies in it.
func agentsRun(t *testing.T, c float64, seed uint64, extra ...Option) (first int, inBand float64) {
	t.Helper()
	l := Setting()
	r, err := Run(NewGovernor(l), Shed(c), append([]Option{WithNoise(seed), For(240 * time.Second)}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	b := SettleBand(c, l.High)
	offers := r.Offers()
	first = len(offers)
	for i, x := range offers {
		if b.Contains(x) {
			first = i
			break
		}
	}
	var n, in int
	for _, w := range r.Windows[r.Since(120*time.Second):] {
		n++
		if b.Contains(w.Offer) {
			in++
		}
	}
	return first, float64(in) / float64(max(n, 1))
}

// agentEvery is how often the simulated agents send their deltas: as the
// real ones do, at every read of the controller's governor (a fifth of its
// 1 s tick).
const agentEvery = 200 * time.Millisecond

// A controller with 100 agents, 1–5 % of whose sends arrive one send late,
// converges as one process does: over a sweep of capacities and seeds (the
// target's noise the same for both), the mean number of decisions before
// the offer first enters the settle band is within one of one process's,
// and the share of the last 120 s's windows in the band within 5 points.
func TestHundredAgentsSettleAsOneProcess(t *testing.T) {
	t.Parallel()
	caps := []float64{20, 50, 100, 400, 1000, 3000, 9000}
	const seeds = 6
	var table strings.Builder
	for _, late := range []float64{0.01, 0.05} {
		var firstOne, firstMany, bandOne, bandMany float64
		runs := 0
		for _, c := range caps {
			for seed := uint64(1); seed <= seeds; seed++ {
				f1, b1 := agentsRun(t, c, seed)
				f2, b2 := agentsRun(t, c, seed, WithAgents(100, late, agentEvery))
				firstOne, firstMany, bandOne, bandMany = firstOne+float64(f1), firstMany+float64(f2), bandOne+b1, bandMany+b2
				runs++
			}
		}
		n := float64(runs)
		fmt.Fprintf(&table, "late %2.0f %%: decisions to enter the band %.2f (one process) vs %.2f (100 agents); windows in the band over the last 120 s %.1f %% vs %.1f %% (%d runs)\n",
			100*late, firstOne/n, firstMany/n, 100*bandOne/n, 100*bandMany/n, runs)
		if firstMany/n > firstOne/n+1 || bandMany/n < bandOne/n-0.05 {
			t.Errorf("late %v: 100 agents converge slower than one process", late)
		}
	}
	t.Log("\n" + table.String())
}

// Counts are counts: a late send is merged into the agent's next one, so
// every attempt the target served reaches the controller; what is still
// counted or held by an agent at the end is all that has not arrived yet.
func TestAgentsLoseNoAttempt(t *testing.T) {
	a := &agents{n: 7, late: 0.3, every: time.Second}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
	a.start(rand.New(rand.NewPCG(1, 2)))
	var served, arrived uint64
	step := 200 * time.Millisecond
	for i := range 1000 {
		ok, failed := uint64(i%13), uint64(i%5)
		served += ok + failed
		dok, dfail := a.step(time.Duration(i)*step, step, ok, failed)
		arrived += dok + dfail
	}
	var left uint64
	for i := range a.n {
		left += a.pendOK[i] + a.pendFail[i] + a.heldOK[i] + a.heldFail[i]
	}
	if arrived+left != served || arrived == 0 {
		t.Fatalf("served %d, arrived %d, still at the agents %d", served, arrived, left)
	}
	if a.lateSends == 0 || a.sends != 7*200 {
		t.Fatalf("%d sends, %d late: want one a second per agent, some late", a.sends, a.lateSends)
	}
	if _, err := Run(NewGovernor(Setting()), Shed(300), WithNoise(1), For(time.Second), WithAgents(0, 0, time.Second)); err == nil {
		t.Fatal("0 agents accepted")
	}
	if _, err := Run(NewGovernor(Setting()), Shed(300), For(time.Second), WithAgents(3, 0, time.Second)); err == nil {
		t.Fatal("agents without noise accepted")
	}
}
