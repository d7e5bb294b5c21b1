package engine

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseFailOn: any --fail-on value is a rule or one error line; a rule
// reads back the same from its own spelling, and what it fails is exactly
// what its terms name.
func FuzzParseFailOn(f *testing.F) {
	for _, s := range []string{DefaultFailOn, "transport,5xx", "429,503", "timeout", "dns, TLS ,other", "", ",", "600", "099", "5xx,", "x", "1xx,2xx,3xx,4xx,5xx", "+503", "0503", "٥٠٣"} {
		f.Add(s, 503)
	}
	f.Fuzz(func(t *testing.T, spec string, code int) {
		r, err := ParseFailOn(spec)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q", spec, err)
			}
			return
		}
		back, err := ParseFailOn(r.String())
		if err != nil || back != r {
			t.Fatalf("%q → %q reads back as %q, %v", spec, r.String(), back.String(), err)
		}
		if code < 100 || code > 599 {
			return
		}
		named := false
		for _, term := range strings.Split(strings.ToLower(spec), ",") {
			term = strings.TrimSpace(term)
			named = named || term == fmt.Sprintf("%dxx", code/100) || term == strconv.Itoa(code)
		}
		if r.failedStatus(code) != named {
			t.Fatalf("%q: status %d failed=%v, named=%v", spec, code, r.failedStatus(code), named)
		}
	})
}
