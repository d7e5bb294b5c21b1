package throttlevegeta

import (
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestDefaultClassifierFailsLikeTheCLI(t *testing.T) {
	cases := []struct {
		name   string
		r      vegeta.Result
		failed bool
	}{
		{"200", vegeta.Result{Code: 200}, false},
		{"204", vegeta.Result{Code: 204}, false},
		{"302", vegeta.Result{Code: 302}, false},
		{"404 is the test's problem, not congestion", vegeta.Result{Code: 404, Error: "404 Not Found"}, false},
		{"429", vegeta.Result{Code: 429, Error: "429 Too Many Requests"}, true},
		{"500", vegeta.Result{Code: 500, Error: "500 Internal Server Error"}, true},
		{"503", vegeta.Result{Code: 503, Error: "503 Service Unavailable"}, true},
		{"transport error", vegeta.Result{Error: "dial tcp 127.0.0.1:1: connect: connection refused"}, true},
		{"timeout", vegeta.Result{Error: "Get \"http://127.0.0.1:1\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}, true},
	}
	for _, c := range cases {
		if got := DefaultClassifier(&c.r); got != c.failed {
			t.Errorf("%s: failed = %v, want %v", c.name, got, c.failed)
		}
	}
}

func TestCounterCountsEveryResultOnce(t *testing.T) {
	c := NewCounter(nil)
	for _, code := range []uint16{200, 200, 503, 0, 404, 429} {
		c.Observe(&vegeta.Result{Code: code})
	}
	c.Observe(nil)
	if ok, failed := c.Attempts(); ok != 3 || failed != 3 {
		t.Errorf("Attempts = %d ok, %d failed, want 3, 3", ok, failed)
	}

	// A custom classifier: only 503 fails.
	only503 := NewCounter(func(r *vegeta.Result) bool { return r.Code == 503 })
	for _, code := range []uint16{200, 503, 500, 0} {
		only503.Observe(&vegeta.Result{Code: code})
	}
	if ok, failed := only503.Attempts(); ok != 3 || failed != 1 {
		t.Errorf("custom: Attempts = %d ok, %d failed, want 3, 1", ok, failed)
	}
}
