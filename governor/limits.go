package governor

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Mode says what an offer counts.
type Mode uint8

const (
	// Rate: the offer is iterations per second; fractions are kept.
	Rate Mode = iota
	// Concurrency: the offer is iterations in flight; offers are whole numbers.
	Concurrency
)

func (m Mode) String() string {
	if m == Concurrency {
		return "concurrency"
	}
	return "rate"
}

// Default limits, as docs/design.md §3 gives them.
const (
	DefaultFloor       = 1.0
	DefaultHigh        = 0.05
	DefaultWindow      = 5 * time.Second
	DefaultMinAttempts = 20
)

// Limits bound one governed phase. Build them with NewLimits, which fills the
// defaults, then change what you need; Validate says what is wrong with a
// value instead of replacing it.
type Limits struct {
	Mode Mode
	// Ceiling is the authored rate or concurrency: the offer never exceeds it.
	Ceiling float64
	// Floor is the offer's lower bound (default 1).
	Floor float64
	// Start is the opening offer (default: Floor). A target known to be
	// robust declares a higher start.
	Start float64
	// High: a window whose failure fraction is above it backs off (default 0.05).
	High float64
	// Low: a window whose failure fraction is at or below it is clean
	// (default High/5).
	Low float64
	// Window is how long evidence is gathered at one offer before a decision
	// (default 5 s).
	Window time.Duration
	// MinAttempts is how many resolved attempts a window needs to count as
	// evidence (default 20). A window still short at 4 × Window is a
	// no-evidence hold.
	MinAttempts uint64
}

// NewLimits returns the default limits for a phase with the given ceiling.
func NewLimits(mode Mode, ceiling float64) Limits {
	return Limits{
		Mode:        mode,
		Ceiling:     ceiling,
		Floor:       DefaultFloor,
		Start:       DefaultFloor,
		High:        DefaultHigh,
		Low:         DefaultHigh / 5,
		Window:      DefaultWindow,
		MinAttempts: DefaultMinAttempts,
	}
}

// Validate reports the first limit that breaks a rule, naming the field and
// the rule: 0 < floor <= start <= ceiling, 0 <= low < high < 1, a positive
// window and min attempts, no NaN or infinity, and whole numbers for floor,
// start and ceiling in concurrency mode.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"ceiling", l.Ceiling}, {"floor", l.Floor}, {"start", l.Start}, {"high", l.High}, {"low", l.Low}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return limitErr(f.name, "", "{limit} must be a finite number, got %v", f.v)
		}
	}
	switch {
	case l.Mode != Rate && l.Mode != Concurrency:
		return limitErr("mode", "", "{limit} must be rate or concurrency, got %d", l.Mode)
	case l.Floor <= 0:
		return limitErr("floor", "", "{limit} must be > 0, got %v", l.Floor)
	case l.Ceiling <= 0:
		return limitErr("ceiling", "", "{limit} must be > 0, got %v", l.Ceiling)
	case l.Floor > l.Ceiling:
		return limitErr("floor", "ceiling", "{limit} (%v) must be <= {other} (%v)", l.Floor, l.Ceiling)
	case l.Start < l.Floor:
		return limitErr("start", "floor", "{limit} (%v) must be >= {other} (%v)", l.Start, l.Floor)
	case l.Start > l.Ceiling:
		return limitErr("start", "ceiling", "{limit} (%v) must be <= {other} (%v)", l.Start, l.Ceiling)
	case l.High <= 0 || l.High >= 1:
		return limitErr("high", "", "{limit} must be in (0, 1), got %v", l.High)
	case l.Low < 0:
		return limitErr("low", "", "{limit} must be >= 0, got %v", l.Low)
	case l.Low >= l.High:
		return limitErr("low", "high", "{limit} (%v) must be < {other} (%v)", l.Low, l.High)
	case l.Window <= 0:
		return limitErr("window", "", "{limit} must be > 0, got %v", l.Window)
	case l.MinAttempts == 0:
		return limitErr("min attempts", "", "{limit} must be > 0")
	}
	if l.Mode == Concurrency {
		for _, f := range []struct {
			name string
			v    float64
		}{{"ceiling", l.Ceiling}, {"floor", l.Floor}, {"start", l.Start}} {
			if f.v != math.Trunc(f.v) {
				return limitErr(f.name, "", "{limit} must be a whole number in concurrency mode, got %v", f.v)
			}
		}
	}
	return nil
}

// LimitError is a Limits value Validate refuses. It names the limits at
// fault, so a host can word the message in its own terms (a flag, an
// option) without parsing it: see In.
type LimitError struct {
	// Limit is the limit at fault: "ceiling", "floor", "start", "high",
	// "low", "window", "min attempts" or "mode".
	Limit string
	// Other is the limit Limit was compared with, or "".
	Other string
	text  string // with {limit} and {other} where the names go
}

func limitErr(limit, other, format string, args ...any) *LimitError {
	return &LimitError{Limit: limit, Other: other, text: fmt.Sprintf(format, args...)}
}

// Error is the message in the governor's own names.
func (e *LimitError) Error() string { return e.In(nil) }

// In is the message with each limit's name given by name (nil: the
// governor's own names), and no package prefix.
func (e *LimitError) In(name func(limit string) string) string {
	if name == nil {
		name = func(limit string) string { return limit }
	}
	return strings.NewReplacer("{limit}", name(e.Limit), "{other}", name(e.Other)).Replace(e.text)
}
