// Package throttlehttp is client-side adaptive throttling for Go programs
// that call a fragile HTTP service: an http.RoundTripper that sends requests
// at the rate (or concurrency) throttle's governor decides, from the outcomes
// of the requests themselves.
//
// Every request passes a gate.Gate before it reaches the base RoundTripper:
// in rate mode the gate admits requests per second, in concurrency mode it
// bounds the requests in flight. Every outcome is classified, ok or failed,
// into cumulative attempt counters, and a governor reading them on its own
// ticker moves the gate's offer window by window: it starts at the floor (or
// Limits.Start), climbs while the service answers cleanly and backs off in
// proportion to the failures when it does not, never above the ceiling.
//
//	tr, err := throttlehttp.New(http.DefaultTransport,
//		throttlehttp.WithLimits(governor.NewLimits(governor.Rate, 500)))
//	if err != nil { ... }
//	defer tr.Close()
//	client := &http.Client{Transport: tr}
//
// A request whose context ends while it waits at the gate fails with the
// context's error and never reaches the service, so a deadline set by the
// caller bounds the whole request, throttling included. Such a request is not
// an attempt and is not counted; nor is one its caller cancelled while it was
// under way. DefaultClassifier fails what throttle's CLI fails: a transport
// error or timeout, a 5xx answer and 429.
//
// A timeout is the service's failure only when the service had a fair share
// of the time: a request whose deadline passes at the service after the gate
// held it for more than half of the time it had on entering RoundTrip is not
// counted. Otherwise a throttled client with many callers waiting would count
// its own queueing as the service's slowness and throttle itself further.
//
// In concurrency mode a request holds its place until its response body is
// closed or read to the end (or at once when RoundTrip fails), as a caller of
// http.Client must do anyway; a body left open holds its place for good.
//
// Close stops the governor. The gate stays at the last offer applied, and
// requests keep passing it, no longer governed.
package throttlehttp
