package options

import (
	"errors"
	"strings"
)

// Error is one problem with one option: bad input or an option throttle
// does not support. The CLI prints it as one line and exits 2.
type Error struct {
	// Option is the option as its source spells it: a script key
	// ("maxRedirects", "thresholds"), a flag ("--rps") or an environment
	// variable ("K6_RPS").
	Option string
	// Scenario is the scenario the option belongs to; "" for a top-level
	// option.
	Scenario string
	// Unsupported marks a documented k6 option that throttle refuses.
	Unsupported bool
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("options: ")
	if e.Scenario != "" {
		b.WriteString("scenario \"" + e.Scenario + "\": ")
	}
	if e.Option != "" {
		b.WriteString(e.Option + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors are every problem Resolve found, in a stable order, so that a
// user fixes them all in one pass. Error() is one line per problem.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// err returns es as an error: nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Unsupported lists the options in err that throttle refuses (as opposed
// to malformed ones), e.g. for a test or a compatibility report; a
// refused executor is listed as its scenario.
func Unsupported(err error) []string {
	var es Errors
	if !errors.As(err, &es) {
		var e *Error
		if errors.As(err, &e) && e.Unsupported {
			return []string{e.name()}
		}
		return nil
	}
	var out []string
	for _, e := range es {
		if e.Unsupported {
			out = append(out, e.name())
		}
	}
	return out
}

// name is the option, or the scenario when the scenario itself (its
// executor) is refused.
func (e *Error) name() string {
	if e.Option == "" && e.Scenario != "" {
		return "scenario \"" + e.Scenario + "\""
	}
	return e.Option
}
