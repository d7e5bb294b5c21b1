package throttlevegeta

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

// step is one call in a pacing script: an optional Apply before Pace, then
// Pace(elapsed, hits) and the exact wait it must return.
type step struct {
	apply   float64 // 0: no change
	elapsed time.Duration
	hits    uint64
	want    time.Duration
}

func runScript(t *testing.T, p *Pacer, steps []step) {
	t.Helper()
	for i, s := range steps {
		if s.apply != 0 {
			p.Apply(s.apply)
		}
		got, stop := p.Pace(s.elapsed, s.hits)
		if stop {
			t.Fatalf("step %d: Pace(%v, %d) asked to stop", i, s.elapsed, s.hits)
		}
		if got != s.want {
			t.Fatalf("step %d: Pace(%v, %d) = %v, want %v", i, s.elapsed, s.hits, got, s.want)
		}
	}
}

func TestPaceAcrossRateChanges(t *testing.T) {
	cases := []struct {
		name               string
		floor, start, ceil float64
		burst              time.Duration
		steps              []step
	}{{
		name: "fixed rate paces like ConstantPacer", floor: 1, start: 10, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 100 * ms},
			{elapsed: 100 * ms, hits: 1, want: 100 * ms},
			{elapsed: 150 * ms, hits: 1, want: 50 * ms},
			{elapsed: 205 * ms, hits: 2, want: 95 * ms}, // woke 5 ms late: still on schedule
			{elapsed: 300 * ms, hits: 3, want: 100 * ms},
		},
	}, {
		name: "rise: sent hits are not owed at the new rate", floor: 1, start: 10, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 100 * ms},
			{elapsed: 100 * ms, hits: 1, want: 100 * ms},
			// ConstantPacer at 100/s would owe 18 hits here and return 0.
			{apply: 100, elapsed: 200 * ms, hits: 2, want: 10 * ms},
			{elapsed: 210 * ms, hits: 3, want: 10 * ms},
			{elapsed: 221 * ms, hits: 4, want: 9 * ms},
		},
	}, {
		name: "fall: next hit one new interval after the last was due", floor: 1, start: 100, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 10 * ms},
			{elapsed: 10 * ms, hits: 1, want: 10 * ms},
			{elapsed: 20 * ms, hits: 2, want: 10 * ms},
			// The old schedule's hits 0..2 were due at 10, 20, 30 ms; hit 2
			// was sent at 30 ms. At 10/s the next is due at 130 ms, not at
			// (3+1)/10 s = 400 ms as a fresh ConstantPacer would say.
			{apply: 10, elapsed: 30 * ms, hits: 3, want: 100 * ms},
			{elapsed: 130 * ms, hits: 4, want: 100 * ms},
		},
	}, {
		name: "change seen late, during a long sleep: no stall", floor: 1, start: 1, ceil: 1000, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: time.Second},
			{elapsed: time.Second, hits: 1, want: time.Second},
			// vegeta slept the whole second at 1/s before it asked again.
			{apply: 1000, elapsed: 2 * time.Second, hits: 2, want: 1 * ms},
			{elapsed: 2*time.Second + 1*ms, hits: 3, want: 1 * ms},
		},
	}, {
		name: "two changes before one Pace: only the last counts", floor: 1, start: 10, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 100 * ms},
			{apply: 100, elapsed: 0, hits: 0, want: 10 * ms}, // same call again: re-anchored at 0
			{apply: 50, elapsed: 0, hits: 0, want: 20 * ms},
			{elapsed: 20 * ms, hits: 1, want: 20 * ms},
		},
	}, {
		name: "behind beyond the burst window: missed hits dropped", floor: 1, start: 100, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 10 * ms},
			// Workers were all busy: 480 ms late. Hits due within the
			// 10 ms window go at once (1 + 100 × 0.01 = 2), then the pace.
			{elapsed: 500 * ms, hits: 1, want: 0},
			{elapsed: 500 * ms, hits: 2, want: 0},
			{elapsed: 500 * ms, hits: 3, want: 10 * ms},
		},
	}, {
		name: "behind within the burst window: caught up", floor: 1, start: 100, ceil: 100, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 10 * ms},
			{elapsed: 18 * ms, hits: 1, want: 2 * ms},
			{elapsed: 28 * ms, hits: 2, want: 2 * ms},
			{elapsed: 39 * ms, hits: 3, want: 1 * ms},
			{elapsed: 49 * ms, hits: 4, want: 1 * ms},
			{elapsed: 59 * ms, hits: 5, want: 1 * ms},
		},
	}, {
		name: "burst 0 never sends two hits closer than an interval", floor: 1, start: 100, ceil: 100, burst: 0,
		steps: []step{
			{elapsed: 0, hits: 0, want: 10 * ms},
			{elapsed: 500 * ms, hits: 1, want: 0},
			{elapsed: 500 * ms, hits: 2, want: 10 * ms},
		},
	}, {
		name: "clamped to floor and ceiling", floor: 5, start: 5, ceil: 20, burst: 10 * ms,
		steps: []step{
			{apply: 1e9, elapsed: 0, hits: 0, want: 50 * ms},
			{apply: 0.001, elapsed: 50 * ms, hits: 1, want: 200 * ms},
		},
	}, {
		name: "fractional rate rounds the wait up to the nanosecond", floor: 1, start: 3, ceil: 3, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 333333334},
			{elapsed: 333333334, hits: 1, want: 333333333},
			{elapsed: time.Second, hits: 3, want: 333333334},
		},
	}, {
		name: "reused for a new attack: schedule starts afresh", floor: 1, start: 10, ceil: 10, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 0, want: 100 * ms},
			{elapsed: 100 * ms, hits: 1, want: 100 * ms},
			{elapsed: 200 * ms, hits: 2, want: 100 * ms},
			{elapsed: 0, hits: 0, want: 100 * ms},
		},
	}, {
		name: "a caller claiming hits far ahead is capped at 1/MinRate", floor: MinRate, start: MinRate, ceil: 1, burst: 10 * ms,
		steps: []step{
			{elapsed: 0, hits: 5, want: 1000 * time.Second},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPacer(c.floor, c.start, c.ceil, WithBurst(c.burst))
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, p, c.steps)
		})
	}
}

// TestPaceProperties drives a pacer as vegeta does (sleep the wait, maybe
// wake late, send, ask again) while the rate changes at random, and checks
// the invariants the Pacer doc promises on every call.
func TestPaceProperties(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		const floor, ceil = 1.0, 5000.0
		burst := time.Duration(r.IntN(20)) * ms
		p, err := NewPacer(floor, 100, ceil, WithBurst(burst))
		if err != nil {
			t.Fatal(err)
		}
		var (
			elapsed time.Duration
			hits    uint64
			// hits sent since the rate last changed, and when it changed
			sinceChange uint64
			changedAt   time.Duration
			prevRate    = p.Rate(0)
		)
		for i := 0; i < 3000; i++ {
			if r.IntN(50) == 0 {
				p.Apply(math.Exp(r.Float64() * math.Log(ceil*2)))
			}
			rate := p.Rate(elapsed)
			if rate != prevRate {
				sinceChange, changedAt, prevRate = 0, elapsed, rate
			}
			wait, stop := p.Pace(elapsed, hits)
			if stop {
				t.Fatalf("seed %d: asked to stop", seed)
			}
			interval := time.Duration(math.Ceil(1e9 / rate))
			if wait < 0 || wait > interval {
				t.Fatalf("seed %d call %d: wait %v outside [0, %v] at rate %v", seed, i, wait, interval, rate)
			}
			late := time.Duration(0)
			if r.IntN(10) == 0 {
				late = time.Duration(r.Int64N(int64(30 * ms)))
			}
			elapsed += wait + late
			hits++
			sinceChange++
			// No burst: since the change, no more hits than the new rate
			// allows over the time since, plus the one that opened it and
			// the burst window's worth.
			allowed := float64(elapsed-changedAt)/1e9*rate + 2 + rate*burst.Seconds()
			if float64(sinceChange) > allowed {
				t.Fatalf("seed %d call %d: %d hits in %v at %v/s (allowed %.1f)", seed, i, sinceChange, elapsed-changedAt, rate, allowed)
			}
		}
	}
}

func TestNewPacerRejectsBadInput(t *testing.T) {
	cases := []struct {
		floor, start, ceil float64
		opts               []PacerOption
		want               string
	}{
		{0, 1, 10, nil, "floor must be >= 0.001"},
		{math.NaN(), 1, 10, nil, "floor must be a finite rate"},
		{1, 1, math.Inf(1), nil, "ceiling must be a finite rate"},
		{2, 1, 10, nil, "start (1) must be >= floor (2)"},
		{1, 11, 10, nil, "start (11) must be <= ceiling (10)"},
		{1, 1, 10, []PacerOption{WithBurst(-ms)}, "burst must be >= 0"},
	}
	for _, c := range cases {
		_, err := NewPacer(c.floor, c.start, c.ceil, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPacer(%v, %v, %v) error = %v, want it to mention %q", c.floor, c.start, c.ceil, err, c.want)
		}
	}
}

func TestApplyReportsWhatItApplied(t *testing.T) {
	p, err := NewPacer(2, 2, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ask, want float64 }{{10, 10}, {100, 50}, {1, 2}, {math.NaN(), 2}, {math.Inf(1), 50}, {-3, 2}} {
		if got := p.Apply(c.ask); got != c.want {
			t.Errorf("Apply(%v) = %v, want %v", c.ask, got, c.want)
		}
		if got := p.Rate(0); got != c.want {
			t.Errorf("after Apply(%v) Rate = %v, want %v", c.ask, got, c.want)
		}
	}
}

// BenchmarkPace is the pacer's cost per hit, uncontended: vegeta calls it
// once per hit from one goroutine.
func BenchmarkPace(b *testing.B) {
	p, err := NewPacer(1, 1000, 1000)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var hits uint64
	for b.Loop() {
		p.Pace(time.Duration(hits)*ms, hits)
		hits++
	}
}
