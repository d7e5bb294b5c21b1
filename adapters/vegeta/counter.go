package throttlevegeta

import (
	"net/http"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/throttlekit/throttle/governor"
)

// Classifier decides whether one vegeta result is a failed attempt. It must
// be safe for concurrent use and must not keep r.
type Classifier func(r *vegeta.Result) (failed bool)

// DefaultClassifier fails what throttle's CLI fails by default: a hit with no
// response (Code 0: a transport error, a timeout, a request that could not be
// built), a 5xx answer and 429 Too Many Requests. Everything else is ok,
// including other 4xx answers: the target answered, and a 404 is the test's
// problem, not the target's congestion.
func DefaultClassifier(r *vegeta.Result) bool {
	return r.Code == 0 || r.Code >= 500 || r.Code == http.StatusTooManyRequests
}

// Counter turns vegeta results into the governor's cumulative attempt
// counters: every observed result is one resolved attempt, ok or failed by
// its Classifier. It implements governor.Counters. The zero value is not
// usable; build it with NewCounter. It is safe for concurrent use.
type Counter struct {
	classify Classifier
	tally    governor.Tally
}

// NewCounter returns a counter that classifies with c, or with
// DefaultClassifier when c is nil.
func NewCounter(c Classifier) *Counter {
	if c == nil {
		c = DefaultClassifier
	}
	return &Counter{classify: c}
}

// Observe counts one result. A nil result is ignored.
func (c *Counter) Observe(r *vegeta.Result) {
	if r == nil {
		return
	}
	c.tally.Add(c.classify(r))
}

// Attempts returns the cumulative counts (governor.Counters).
func (c *Counter) Attempts() (ok, failed uint64) { return c.tally.Attempts() }
