package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/valyala/fasthttp"
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
	ClassOther                // any other failure: another transport error or another failing status
	ClassSlow                 // an otherwise ok attempt slower than the latency budget (--slow)
	ClassDNS                  // the host name did not resolve
	ClassTLS                  // the TLS handshake failed (certificate, protocol, alert)
	NumClasses                // how many classes there are
)

// The order of the constants is the order of the report's fields, which
// existing readers index; dns and tls came later and so come last.
var classNames = [NumClasses]string{"ok", "refused", "reset", "timeout", "5xx", "429", "other", "slow", "dns", "tls"}

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

// classify is the one classification both transports share: the class an
// attempt has if it fails, and its error code (see ErrorCode), from its
// transport error (nil when a response arrived) and status. Whether it
// fails is the FailedFunc's decision, not this.
func classify(err error, status int) (Class, int) {
	if err == nil {
		code := 0
		if status >= 400 {
			code = 1000 + status
		}
		return statusClass(status), code
	}
	c := errClass(err)
	return c, errorCode(err, c)
}

// errClass classifies a transport error. The caller has already ruled out
// the engine's own cancellation (an aborted attempt is not the target's
// doing and is not classified at all).
func errClass(err error) Class {
	var te interface{ Timeout() bool }
	switch {
	case isDNS(err): // a lookup that timed out did not resolve either
		return ClassDNS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &te) && te.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case isTLS(err):
		return ClassTLS
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, fasthttp.ErrConnectionClosed):
		return ClassReset
	}
	return ClassOther
}

// isDNS reports whether err is a failed name resolution.
func isDNS(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// isTLS reports whether err is a failed TLS handshake or certificate
// check: an untrusted authority, a wrong host name, an alert from the peer
// or a peer that does not speak TLS.
func isTLS(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		certErr  *tls.CertificateVerificationError
		alert    tls.AlertError
		recHdr   tls.RecordHeaderError
	)
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &certErr) || errors.As(err, &alert) || errors.As(err, &recHdr) || errors.Is(err, errTLSHandshake)
}

// errTLSHandshake wraps a handshake error the tls package reports without
// a type of its own (a peer that hangs up mid-handshake, say).
var errTLSHandshake = errors.New("TLS handshake failed")

// ErrBodyTooLarge fails an attempt whose response body is larger than the
// limit of what a kept body may hold (DriverConfig.BodyLimit); the body is
// not read past it.
var ErrBodyTooLarge = errors.New("response body larger than the body limit")

// unreachable reports whether a failed attempt found no server to answer
// it: refused, reset before any byte of an answer, a name that did not
// resolve, or a connect that timed out. These are what tells an outage
// from congestion (governor.Load.Unreachable); a status, a 503 included,
// is an answer.
func unreachable(res *Response) bool {
	if !res.Failed {
		return false
	}
	switch res.Class {
	case ClassRefused, ClassDNS:
		return true
	case ClassReset:
		return res.BytesReceived == 0
	case ClassTimeout:
		var op *net.OpError
		return errors.As(res.Err, &op) && op.Op == "dial" || errors.Is(res.Err, fasthttp.ErrDialTimeout)
	}
	return false
}

// ErrorCode values, as k6's documentation numbers its error codes, so that
// a script's res.error_code reads the same: 1000 + status for a response
// with status >= 400; for transport errors the codes below. 0 is no error.
const (
	ErrorGeneric      = 1000 // an error of no more specific code
	ErrorInvalidURL   = 1020 // the URL could not be parsed or has no host
	ErrorTimeout      = 1050 // the attempt outlived its timeout
	ErrorDNS          = 1100 // the host name did not resolve
	ErrorDial         = 1200 // another error while connecting
	ErrorRefused      = 1210 // the connection was refused
	ErrorReset        = 1220 // the connection was reset or closed mid-exchange
	ErrorTLS          = 1300 // another TLS error
	ErrorTLSAuthority = 1310 // the certificate's authority is not trusted
	ErrorTLSHostname  = 1311 // the certificate does not name the host
	ErrorBodyTooLarge = 1601 // throttle's own: the body passed the body limit (k6 has no such code)
)

// errorCode is the code of a transport error of class c.
func errorCode(err error, c Class) int {
	var (
		op       *net.OpError
		urlErr   *url.Error
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
	)
	switch {
	case c == ClassTimeout:
		return ErrorTimeout
	case c == ClassRefused:
		return ErrorRefused
	case c == ClassReset:
		return ErrorReset
	case c == ClassDNS:
		return ErrorDNS
	case errors.Is(err, ErrBodyTooLarge):
		return ErrorBodyTooLarge
	case errors.Is(err, errInvalidURL):
		return ErrorInvalidURL
	case errors.As(err, &unknown):
		return ErrorTLSAuthority
	case errors.As(err, &hostname):
		return ErrorTLSHostname
	case c == ClassTLS:
		return ErrorTLS
	case errors.As(err, &op) && op.Op == "dial":
		return ErrorDial
	case errors.As(err, &urlErr) && urlErr.Op == "parse":
		return ErrorInvalidURL
	}
	return ErrorGeneric
}

// errInvalidURL wraps a Request whose URL cannot be sent.
var errInvalidURL = errors.New("invalid URL")

// DefaultFailOn is the failure rule unless told otherwise: transport errors,
// timeouts, 5xx and 429.
const DefaultFailOn = "transport,timeout,5xx,429"

// FailOn says which attempts count as failed. Build it with ParseFailOn; the
// zero value counts nothing as failed.
type FailOn struct {
	status [600]bool        // by status code
	class  [NumClasses]bool // transport classes (refused, reset, timeout, dns, tls, other)
	spec   string
}

// ParseFailOn parses a comma-separated failure rule. Its terms:
//
//	transport   refused, reset, dns, tls and other transport errors
//	refused, reset, timeout, dns, tls, other   one transport class ("other" also
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
			f.class[ClassDNS], f.class[ClassTLS] = true, true
		case "refused":
			f.class[ClassRefused] = true
		case "reset":
			f.class[ClassReset] = true
		case "timeout":
			f.class[ClassTimeout] = true
		case "other":
			f.class[ClassOther] = true
		case "dns":
			f.class[ClassDNS] = true
		case "tls":
			f.class[ClassTLS] = true
		case "1xx", "2xx", "3xx", "4xx", "5xx":
			base := int(t[0]-'0') * 100
			for c := base; c < base+100; c++ {
				f.status[c] = true
			}
		default:
			code, err := strconv.Atoi(t)
			if err != nil || code < 100 || code > 599 || len(t) != 3 {
				return FailOn{}, fmt.Errorf("unknown --fail-on term %q (want transport, refused, reset, timeout, dns, tls, other, 1xx-5xx or a status code 100-599)", t)
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

// failedResponse is FailOn as a FailedFunc.
func (f *FailOn) failedResponse(r *Response) bool {
	if r.Err != nil {
		return f.failedClass(r.Class)
	}
	return f.failedStatus(r.Status)
}

// ClassOf is the class an attempt of another protocol has if it fails,
// by the rules requests are classified with: its transport error (nil
// when an answer arrived) and its HTTP status (a WebSocket handshake's).
func ClassOf(err error, status int) Class {
	c, _ := classify(err, status)
	return c
}
