package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/testwait"
)

// An agent's saturated ticks are its watch's once it sends one (every
// agent does, once a tick), and then add up to the run's generator; an
// agent that has sent none yet counts the deltas whose verdict said
// saturated.
func TestAgentSaturatedTicks(t *testing.T) {
	url := &member{}
	for _, sat := range []bool{true, false, true, true} {
		url.countSaturated(&Delta{Saturated: sat})
	}
	if url.SaturatedTicks != 3 {
		t.Errorf("no watch sent: %d saturated ticks, want the 3 saturated deltas", url.SaturatedTicks)
	}

	script := &member{}
	steps := []struct {
		d    Delta
		want uint64
	}{
		{Delta{Saturated: true}, 1}, // before its first watch: the delta's verdict
		{Delta{Saturated: true, Watch: &Watch{Ticks: 10, SaturatedTicks: 2}}, 2},
		{Delta{Saturated: true}, 2}, // deltas between watches count nothing more
		{Delta{Saturated: true}, 2},
		{Delta{Watch: &Watch{Ticks: 20, SaturatedTicks: 6}}, 6},
	}
	for i, s := range steps {
		script.countSaturated(&s.d)
		if script.SaturatedTicks != s.want {
			t.Fatalf("delta %d: %d saturated ticks, want %d", i, script.SaturatedTicks, s.want)
		}
	}

	other := &member{}
	other.countSaturated(&Delta{Watch: &Watch{Ticks: 20, SaturatedTicks: 3}})
	c := &Controller{members: map[string]*member{"a": script, "b": other}}
	g := c.generator([]AgentInfo{script.AgentInfo, other.AgentInfo})
	if sum := script.SaturatedTicks + other.SaturatedTicks; uint64(g.SaturatedTicks) != sum || g.Ticks != 40 {
		t.Errorf("generator %d of %d saturated ticks; the agents' entries say %d of 40", g.SaturatedTicks, g.Ticks, sum)
	}
}

// An agent's watch travels with its wait and read-delay figures, and the
// run's generator takes the largest of any agent's, as it does the lag
// and the CPU.
func TestWatchWaitTravels(t *testing.T) {
	w := watchOf(engine.GeneratorSummary{Ticks: 8, SaturatedTicks: 2, Signals: map[string]int{"wait": 2}, MaxWait: 80 * time.Millisecond, PeakCPU: 0.3, MaxReadDelay: 9 * time.Millisecond})
	var back Watch
	if err := json.Unmarshal(encode(w), &back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(encode(w)), `"max_wait_ns":80000000`) || back.MaxWait != 80*time.Millisecond || back.Signals["wait"] != 2 ||
		!strings.Contains(string(encode(w)), `"max_read_delay_ns":9000000`) || back.MaxReadDelay != 9*time.Millisecond {
		t.Errorf("watch %s, decoded %+v", encode(w), back)
	}
	g, ok := sumWatches([]*Watch{&back, nil, {Ticks: 8, MaxWait: 120 * time.Millisecond, PeakCPU: 0.2, MaxReadDelay: 2 * time.Millisecond}})
	if !ok || g.MaxWait != 120*time.Millisecond || g.MaxReadDelay != 9*time.Millisecond || g.Signals["wait"] != 2 || g.Ticks != 16 || g.PeakCPU != 0.3 {
		t.Errorf("summed %+v", g)
	}
}

// A local agent's reading of the machine (its peak, the ticks it let off)
// travels with its watch; one that did not read it (-1) sends none, and
// the run's generator takes the largest peak of those that did and sums
// their spared ticks.
func TestWatchPeakMachineTravels(t *testing.T) {
	read := watchOf(engine.GeneratorSummary{Ticks: 8, PeakCPU: 0.9, PeakMachine: 1.72, MachineSpared: 3})
	unread := watchOf(engine.GeneratorSummary{Ticks: 8, PeakCPU: 0.4, PeakMachine: -1})
	if !strings.Contains(string(encode(read)), `"peak_machine_cpu":1.72`) || !strings.Contains(string(encode(read)), `"machine_spared_ticks":3`) ||
		strings.Contains(string(encode(unread)), "machine") {
		t.Errorf("watches %s and %s", encode(read), encode(unread))
	}
	var back Watch
	if err := json.Unmarshal(encode(read), &back); err != nil {
		t.Fatal(err)
	}
	if g, _ := sumWatches([]*Watch{unread, &back, &back}); g.PeakMachine != 1.72 || g.MachineSpared != 6 {
		t.Errorf("summed peak machine %v, %d ticks spared; want 1.72, 6", g.PeakMachine, g.MachineSpared)
	}
	if g, _ := sumWatches([]*Watch{unread}); g.PeakMachine != -1 {
		t.Errorf("summed peak machine of agents that did not read it: %v, want -1", g.PeakMachine)
	}
}

// A URL run's agents send their watch of themselves as a script's do:
// each agent's entry has its watch (ticks, the CPU it read), its saturated
// ticks are the watch's, and the run's generator sums the watches.
func TestURLAgentsSendWatch(t *testing.T) {
	srv := builtinTarget(t, 1000)
	spec := testSpec(t, srv.URL+"/", 200, 50)
	spec.Duration = time.Second
	c := newController(t, ControllerConfig{Agents: 2, Spec: spec})
	ctx, cancel := context.WithTimeout(context.Background(), 2*testwait.Deadline)
	defer cancel()
	agents := []<-chan error{runAgent(ctx, c, "a", testToken), runAgent(ctx, c, "b", testToken)}
	res := testwait.Receive(t, startRun(t, c, ctx), "the run's end")
	for _, a := range agents {
		if err := testwait.Receive(t, a, "an agent's end"); err != nil {
			t.Fatalf("agent: %v", err)
		}
	}
	if res == nil {
		t.FailNow()
	}
	ticks, saturated := 0, 0
	for _, a := range res.Agents {
		if a.Attempts == 0 || a.Watch == nil || a.Watch.Ticks == 0 || a.Watch.PeakCPU == 0 {
			t.Fatalf("agent %s: %+v, watch %+v: want load carried and a watch of itself with its ticks and CPU", a.ID, a, a.Watch)
		}
		if a.SaturatedTicks != uint64(a.Watch.SaturatedTicks) {
			t.Errorf("agent %s: %d saturated ticks, its watch %d", a.ID, a.SaturatedTicks, a.Watch.SaturatedTicks)
		}
		ticks += a.Watch.Ticks
		saturated += a.Watch.SaturatedTicks
	}
	if res.Generator.Ticks != ticks || res.Generator.SaturatedTicks != saturated || res.Generator.PeakCPU <= 0 {
		t.Errorf("generator %+v, want the agents' watches summed (%d ticks, %d saturated)", res.Generator, ticks, saturated)
	}
}
