// Package target is throttle's built-in HTTP target: a server whose capacity
// and failure model are known exactly, so a governed run against it can be
// checked against the truth. `throttle demo` and `throttle target` serve it;
// tests and benchmarks use it as their loopback adversary.
//
// A Target is an http.Handler built from a Config. Its Capacity is requests
// per second (a token bucket with a small burst) or, with Concurrent,
// requests in service at once. Above capacity its Model decides what
// happens:
//
//   - Shed answers the excess 503 at once: at offer x > c the failure
//     fraction is (x − c)/x.
//   - Queue lets the excess wait in a bounded queue for up to QueueTimeout
//     before it is answered 503: latency grows before failures start.
//   - Collapse is a fragile service: at a measured arrival rate x > c only
//     c·(1 − (x − c)/(2c)) requests per second succeed and the rest fail 500.
//   - Backlog is a thread-pool server with a deep listen backlog: Capacity
//     servers (concurrent), each busy for Latency per request, behind a FIFO
//     queue. Overload never fails; answers come later as the queue grows.
//     Its capacity is servers / Latency. Work whose client gave up still
//     takes a server when it reaches the front (a zombie) unless
//     DropAbandoned is set: the backlog outlives the overload that built it.
//
// Every admitted request takes the base Latency. SetCapacity, SetLatency and
// SetDown change a live target, so a test can resize it, slow it, kill it and
// bring it back mid-run; Stats counts what it answered and why.
//
// Time is an input: WithClock takes a clock.Fake, and the model arithmetic
// (token bucket, queue waits, the collapse curve) follows it exactly, so the
// models are unit-tested without sleeping.
//
// Serve runs a Target on a listener until a context ends. It listens on
// loopback only unless AllowNonLoopback is given: the target exists to be
// overloaded, and exposing it is a decision for the user to make explicitly.
package target
