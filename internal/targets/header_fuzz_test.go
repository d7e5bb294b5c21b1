package targets

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzParseHeader: any -H line (and any header line of a targets file) is
// a header or one error line; what is accepted is a valid header name and
// a value that cannot smuggle a second header or line (no CR, LF or NUL),
// both trimmed, and reads back the same.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"Authorization: Bearer x", "a:b", "X-Y:  z  ", ":v", "k", "K: v\r\nX: y", "K\x00: v", "Héader: v", "K: é", "K: a:b:c", "k : v", "\t: \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		k, v, err := ParseHeader(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error %q spans lines", line, err)
			}
			return
		}
		if k == "" || k != http.CanonicalHeaderKey(k) || strings.ContainsAny(k, " \t:\r\n\x00") {
			t.Fatalf("%q: key %q", line, k)
		}
		if strings.ContainsAny(v, "\r\n\x00") || v != strings.TrimSpace(v) {
			t.Fatalf("%q: value %q", line, v)
		}
		k2, v2, err := ParseHeader(k + ": " + v)
		if err != nil || k2 != k || v2 != v {
			t.Fatalf("%q → %q: %q reads back as %q: %q, %v", line, k, v, k2, v2, err)
		}
	})
}
