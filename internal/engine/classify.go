package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Class is what became of one resolved attempt: ok, or the class of its
// failure. FailOn decides which outcomes fail; an outcome it does not count
// as a failure is ClassOK whatever its status (a 404 is ok unless --fail-on
// names it).
type Class uint8

// The outcome classes, in the order reports list them.
const (
	ClassOK      Class = iota // not a failure
	ClassRefused              // the connection was refused
	ClassReset                // the connection was reset or closed mid-exchange
	ClassTimeout              // the attempt outlived its timeout
	Class5xx                  // a failing response with status 5xx
	Class429                  // a failing response with status 429 Too Many Requests
	ClassOther                // any other failure: another transport error (DNS, TLS, ...) or another failing status
	NumClasses                // how many classes there are
)

var classNames = [NumClasses]string{"ok", "refused", "reset", "timeout", "5xx", "429", "other"}

// String returns the class's name as reports and --fail-on spell it.
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// statusClass classifies a failing response by its status code.
func statusClass(code int) Class {
	switch {
	case code == 429:
		return Class429
	case code >= 500 && code < 600:
		return Class5xx
	}
	return ClassOther
}

// errClass classifies a transport error. The caller has already ruled out
// the engine's own cancellation (an aborted attempt is not the target's
// doing and is not classified at all).
func errClass(err error) Class {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassReset
	}
	return ClassOther
}

// DefaultFailOn is the failure rule unless told otherwise: transport errors,
// timeouts, 5xx and 429.
const DefaultFailOn = "transport,timeout,5xx,429"

// FailOn says which attempts count as failed. Build it with ParseFailOn; the
// zero value counts nothing as failed.
type FailOn struct {
	status [600]bool        // by status code
	class  [NumClasses]bool // transport classes (refused, reset, timeout, other)
	spec   string
}

// ParseFailOn parses a comma-separated failure rule. Its terms:
//
//	transport   refused, reset and other transport errors
//	refused, reset, timeout, other   one transport class ("other" also
//	            covers a status outside 100-599)
//	5xx, 4xx, 3xx, 2xx, 1xx   a whole status class (4xx includes 429)
//	NNN         one status code, 100-599 (e.g. 429, 503, 404)
//
// The rule must name at least one term.
func ParseFailOn(spec string) (FailOn, error) {
	var f FailOn
	var terms []string
	for _, t := range strings.Split(spec, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		terms = append(terms, t)
		switch t {
		case "transport":
			f.class[ClassRefused], f.class[ClassReset], f.class[ClassOther] = true, true, true
		case "refused":
			f.class[ClassRefused] = true
		case "reset":
			f.class[ClassReset] = true
		case "timeout":
			f.class[ClassTimeout] = true
		case "other":
			f.class[ClassOther] = true
		case "1xx", "2xx", "3xx", "4xx", "5xx":
			base := int(t[0]-'0') * 100
			for c := base; c < base+100; c++ {
				f.status[c] = true
			}
		default:
			code, err := strconv.Atoi(t)
			if err != nil || code < 100 || code > 599 || len(t) != 3 {
				return FailOn{}, fmt.Errorf("unknown --fail-on term %q (want transport, refused, reset, timeout, other, 1xx-5xx or a status code 100-599)", t)
			}
			f.status[code] = true
		}
	}
	if len(terms) == 0 {
		return FailOn{}, errors.New("--fail-on names nothing (e.g. " + DefaultFailOn + ")")
	}
	f.spec = strings.Join(terms, ",")
	return f, nil
}

// String returns the rule as ParseFailOn accepts it.
func (f FailOn) String() string { return f.spec }

// failedStatus reports whether a response with this status is a failure.
func (f *FailOn) failedStatus(code int) bool {
	if code >= 100 && code < 600 {
		return f.status[code]
	}
	return f.class[ClassOther]
}

// failedClass reports whether a transport error of class c is a failure.
func (f *FailOn) failedClass(c Class) bool { return f.class[c] }
