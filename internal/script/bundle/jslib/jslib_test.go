package jslib

import (
	"errors"
	"strings"
	"testing"
)

// TestSource: any version and file of a built-in library is its source;
// another host is not jslib's; a library not built in is refused by name.
func TestSource(t *testing.T) {
	for _, name := range Names() {
		for _, u := range []string{
			"https://jslib.k6.io/" + name + "/0.0.1/index.js",
			"https://JSLIB.k6.io/" + name + "/9.9.9.9/dist/bundle.min.js",
			"http://jslib.k6.io/" + name + "/1.0.0/index.js?x=1",
		} {
			src, ok, err := Source(u)
			if !ok || err != nil || !strings.Contains(string(src), "export ") {
				t.Errorf("%s: ok %v err %v, %d bytes, want the built-in module", u, ok, err, len(src))
			}
		}
	}
	if _, ok, err := Source("https://example.test/k6-utils/1.4.0/index.js"); ok || err != nil {
		t.Errorf("another host: ok %v err %v, want it left to the network", ok, err)
	}
	_, ok, err := Source("https://jslib.k6.io/aws/0.11.0/s3.js")
	var nb *NotBuiltIn
	if !ok || !errors.As(err, &nb) || nb.Library != "aws" || !strings.Contains(err.Error(), "k6-summary") {
		t.Errorf("aws: ok %v err %v, want it refused by name with the built-in list", ok, err)
	}
}
