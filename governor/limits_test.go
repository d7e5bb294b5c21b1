package governor

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestNewLimitsDefaults(t *testing.T) {
	l := NewLimits(Rate, 500)
	want := Limits{Mode: Rate, Ceiling: 500, Floor: 1, Start: 1, High: 0.05, Low: 0.01, Window: 5 * time.Second, MinAttempts: 20}
	if l != want {
		t.Fatalf("NewLimits = %+v, want %+v", l, want)
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Limits)
		want   string
	}{
		{"zero ceiling", func(l *Limits) { l.Ceiling = 0 }, "ceiling must be > 0"},
		{"NaN ceiling", func(l *Limits) { l.Ceiling = math.NaN() }, "ceiling must be a finite number"},
		{"Inf ceiling", func(l *Limits) { l.Ceiling = math.Inf(1) }, "ceiling must be a finite number"},
		{"zero floor", func(l *Limits) { l.Floor = 0 }, "floor must be > 0"},
		{"negative floor", func(l *Limits) { l.Floor = -1 }, "floor must be > 0"},
		{"floor above ceiling", func(l *Limits) { l.Floor, l.Start = 200, 200 }, "floor (200) must be <= ceiling (100)"},
		{"start below floor", func(l *Limits) { l.Floor, l.Start = 5, 2 }, "start (2) must be >= floor (5)"},
		{"start above ceiling", func(l *Limits) { l.Start = 101 }, "start (101) must be <= ceiling (100)"},
		{"NaN start", func(l *Limits) { l.Start = math.NaN() }, "start must be a finite number"},
		{"high zero", func(l *Limits) { l.High = 0 }, "high must be in (0, 1)"},
		{"high one", func(l *Limits) { l.High = 1 }, "high must be in (0, 1)"},
		{"NaN high", func(l *Limits) { l.High = math.NaN() }, "high must be a finite number"},
		{"negative low", func(l *Limits) { l.Low = -0.1 }, "low must be >= 0"},
		{"low equal to high", func(l *Limits) { l.Low = l.High }, "low (0.05) must be < high (0.05)"},
		{"NaN low", func(l *Limits) { l.Low = math.NaN() }, "low must be a finite number"},
		{"zero window", func(l *Limits) { l.Window = 0 }, "window must be > 0"},
		{"negative window", func(l *Limits) { l.Window = -time.Second }, "window must be > 0"},
		{"zero min attempts", func(l *Limits) { l.MinAttempts = 0 }, "min attempts must be > 0"},
		{"bad mode", func(l *Limits) { l.Mode = 7 }, "mode must be rate or concurrency"},
		{"fractional concurrency ceiling", func(l *Limits) { l.Mode = Concurrency; l.Ceiling = 10.5 }, "ceiling must be a whole number in concurrency mode"},
		{"fractional concurrency floor", func(l *Limits) { l.Mode = Concurrency; l.Floor, l.Start = 1.5, 2 }, "floor must be a whole number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimits(Rate, 100)
			c.change(&l)
			err := l.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
	ok := NewLimits(Rate, 100)
	ok.Low = 0 // 0 <= low is allowed
	if err := ok.Validate(); err != nil {
		t.Fatalf("low = 0 rejected: %v", err)
	}
}

// A refused Limits value is a *LimitError naming the limits at fault, which
// a host words in its own names without parsing the message.
func TestLimitErrorNamesTheLimits(t *testing.T) {
	l := NewLimits(Rate, 2)
	l.Floor, l.Start = 5, 5
	err := l.Validate()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "floor" || le.Other != "ceiling" {
		t.Fatalf("Validate: %v (%#v), want a LimitError naming floor and ceiling", err, le)
	}
	if got, want := err.Error(), "floor (5) must be <= ceiling (2)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flag := func(limit string) string { return map[string]string{"floor": "--floor", "ceiling": "--rate"}[limit] }
	if got, want := le.In(flag), "--floor (5) must be <= --rate (2)"; got != want {
		t.Errorf("In = %q, want %q", got, want)
	}
}
