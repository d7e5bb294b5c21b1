package gate_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/gate"
	"github.com/throttlekit/throttle/governor"
)

// *Gate is the governor's control target.
var _ governor.Applier = (*gate.Gate)(nil)

func TestNewRejectsBadConfig(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		cfg  gate.Config
		opts []gate.Option
		want string
	}{
		{gate.Config{Mode: 7, Floor: 1, Ceiling: 2, Offer: 1}, nil, "mode"},
		{gate.Config{Floor: nan, Ceiling: 2, Offer: 1}, nil, "floor must be a finite"},
		{gate.Config{Floor: 1, Ceiling: inf, Offer: 1}, nil, "ceiling must be a finite"},
		{gate.Config{Floor: 1, Ceiling: 2, Offer: math.Inf(-1)}, nil, "offer must be a finite"},
		{gate.Config{Floor: 0, Ceiling: 2, Offer: 1}, nil, "floor must be > 0"},
		{gate.Config{Floor: -1, Ceiling: 2, Offer: 1}, nil, "floor must be > 0"},
		{gate.Config{Floor: 3, Ceiling: 2, Offer: 2}, nil, "ceiling (2) must be >= floor (3)"},
		{gate.Config{Floor: 1, Ceiling: 2, Offer: 3}, nil, "offer (3) must be within"},
		{gate.Config{Floor: 1, Ceiling: 2, Offer: 0.5}, nil, "offer (0.5) must be within"},
		{gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 2.5, Offer: 1}, nil, "ceiling must be a whole number"},
		{gate.Config{Mode: gate.Concurrency, Floor: 0.5, Ceiling: 2, Offer: 1}, nil, "floor must be a whole number"},
		{gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 2, Offer: 1.5}, nil, "offer must be a whole number"},
		{gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 1e20, Offer: 1}, nil, "ceiling must be at most"},
		{gate.Config{Floor: 1, Ceiling: 2, Offer: 1}, []gate.Option{gate.WithClock(nil)}, "clock must not be nil"},
		{gate.Config{Floor: 1, Ceiling: 2, Offer: 1}, []gate.Option{gate.WithBurst(-time.Second)}, "burst must be >= 0"},
	} {
		g, err := gate.New(tc.cfg, tc.opts...)
		if err == nil || g != nil {
			t.Errorf("New(%+v) = %v, %v; want an error", tc.cfg, g, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "gate: ") {
			t.Errorf("New(%+v) error %q, want it to say %q", tc.cfg, err, tc.want)
		}
	}
	for _, cfg := range []gate.Config{
		{Mode: gate.Rate, Floor: 0.1, Ceiling: 0.1, Offer: 0.1},
		{Mode: gate.Rate, Floor: 0.5, Ceiling: 200_000, Offer: 37.5},
		{Mode: gate.Concurrency, Floor: 1, Ceiling: 1, Offer: 1},
		{Mode: gate.Concurrency, Floor: 2, Ceiling: 500, Offer: 40},
	} {
		if _, err := gate.New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}

func TestApplyClampsAndReportsWhatItApplied(t *testing.T) {
	rg, _ := newFake(t, gate.Config{Mode: gate.Rate, Floor: 2, Ceiling: 100, Offer: 10})
	cg, _ := newFake(t, gate.Config{Mode: gate.Concurrency, Floor: 2, Ceiling: 100, Offer: 10})
	for _, tc := range []struct {
		g          *gate.Gate
		ask, apply float64
	}{
		{rg, 37.5, 37.5},
		{rg, 500, 100},
		{rg, 0.5, 2},
		{rg, math.Inf(1), 100},
		{rg, math.Inf(-1), 2},
		{rg, math.NaN(), 2}, // NaN changes nothing: the offer stays
		{cg, 7.9, 7},
		{cg, 1000, 100},
		{cg, 1, 2},
		{cg, 2.5, 2},
	} {
		if got := tc.g.Apply(tc.ask); got != tc.apply {
			t.Errorf("%v Apply(%v) = %v, want %v", tc.g.Stats().Mode, tc.ask, got, tc.apply)
		}
		if got := tc.g.Offer(); got != tc.apply {
			t.Errorf("%v Offer() after Apply(%v) = %v, want %v", tc.g.Stats().Mode, tc.ask, got, tc.apply)
		}
	}
}

func TestSetCeiling(t *testing.T) {
	g, _ := newFake(t, gate.Config{Mode: gate.Concurrency, Floor: 2, Ceiling: 100, Offer: 50})
	if applied, err := g.SetCeiling(30); err != nil || applied != 30 {
		t.Fatalf("SetCeiling(30) = %v, %v; want the offer re-clamped to 30", applied, err)
	}
	if got := g.Apply(80); got != 30 {
		t.Errorf("Apply(80) under ceiling 30 = %v", got)
	}
	if applied, err := g.SetCeiling(60); err != nil || applied != 30 {
		t.Errorf("SetCeiling(60) = %v, %v; raising the ceiling must not raise the offer", applied, err)
	}
	if got := g.Apply(80); got != 60 {
		t.Errorf("Apply(80) under ceiling 60 = %v", got)
	}
	for _, tc := range []struct {
		c    float64
		want string
	}{
		{1, "ceiling (1) must be >= floor (2)"},
		{math.NaN(), "finite"},
		{math.Inf(1), "finite"},
		{40.5, "whole number"},
	} {
		applied, err := g.SetCeiling(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetCeiling(%v) error = %v, want it to say %q", tc.c, err, tc.want)
		}
		if applied != 60 {
			t.Errorf("SetCeiling(%v) failing changed the offer to %v", tc.c, applied)
		}
	}
	if s := g.Stats(); s.Ceiling != 60 || s.Offer != 60 || s.Floor != 2 || s.Mode != gate.Concurrency {
		t.Errorf("stats %+v after a rejected SetCeiling", s)
	}
	rg, _ := newFake(t, gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 100, Offer: 80})
	if applied, err := rg.SetCeiling(12.5); err != nil || applied != 12.5 {
		t.Errorf("rate SetCeiling(12.5) = %v, %v", applied, err)
	}
}

func TestModeString(t *testing.T) {
	if gate.Rate.String() != "rate" || gate.Concurrency.String() != "concurrency" || gate.Mode(9).String() != "Mode(9)" {
		t.Errorf("Mode strings: %q %q %q", gate.Rate, gate.Concurrency, gate.Mode(9))
	}
}

// TestGovernorControlEndToEnd drives the gate through the governor's own
// control path: a governor write arrives, the gate clamps it, and the
// confirmation carries the value the gate applied.
func TestGovernorControlEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		cfg        gate.Config
		ask, apply float64
	}{
		{gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 400, Offer: 1}, 800, 400},
		{gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 400, Offer: 1}, 37.5, 37.5},
		{gate.Config{Mode: gate.Rate, Floor: 5, Ceiling: 400, Offer: 5}, 0.25, 5},
		{gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 64, Offer: 1}, 100, 64},
		{gate.Config{Mode: gate.Concurrency, Floor: 1, Ceiling: 64, Offer: 1}, 9.6, 9},
	} {
		g, _ := newFake(t, tc.cfg)
		c := governor.NewControl(g)
		c.Set(governor.OriginGovernor, tc.ask)
		select {
		case conf := <-c.Confirmations():
			if conf.Origin != governor.OriginGovernor || conf.Asked != tc.ask || conf.Applied != tc.apply {
				t.Errorf("%v: confirmation %+v, want asked %v applied %v", tc.cfg.Mode, conf, tc.ask, tc.apply)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no confirmation from the control path")
		}
		if got := g.Offer(); got != tc.apply {
			t.Errorf("%v: gate offer %v after the confirmed apply, want %v", tc.cfg.Mode, got, tc.apply)
		}
		c.Close()
	}
}

func TestGovernorControlAdmitsAtTheConfirmedRate(t *testing.T) {
	// The write really changes admissions: from 1/s to the clamped 50/s.
	g, fc := newFake(t, gate.Config{Mode: gate.Rate, Floor: 1, Ceiling: 50, Offer: 1})
	c := governor.NewControl(g)
	defer c.Close()
	drain(g)
	c.Set(governor.OriginGovernor, 1000)
	select {
	case conf := <-c.Confirmations():
		if conf.Applied != 50 {
			t.Fatalf("applied %v, want 50", conf.Applied)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no confirmation")
	}
	if n := len(simulate(g, fc, time.Second, time.Millisecond)); n < 49 || n > 51 {
		t.Errorf("admitted %d in the second after the confirmed apply, want 50 within one token", n)
	}
}
